#!/usr/bin/env node
// Entry point of the `tracepipe` command. tracepipe and the graphs and plugins it loads are
// TypeScript; tsx compiles them on the fly, so `npm install` is the only set-up step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);

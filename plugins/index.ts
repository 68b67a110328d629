// The built-in components, listed explicitly: this list is the one place that says what a plain
// `tracepipe` can run. Third-party plugins are added from a config's `plugins:` list instead.

import type { Factory } from '../src/pipeline/component.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { debugExporterFactory } from './exporters/debug/index.ts';

export const builtinFactories: readonly Factory[] = [debugExporterFactory];

export function builtinRegistry(): Registry {
  return new Registry(builtinFactories);
}

// Every built-in component's README carries its config table, generated from its schema.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { builtinFactories } from '../plugins/index.ts';
import { readmePath, renderReadme } from '../scripts/config-docs.ts';

for (const factory of builtinFactories) {
  it(`${factory.kind} ${factory.type}: README config table matches the schema`, () => {
    const text = readFileSync(readmePath(factory), 'utf8');
    const rendered = renderReadme(text, factory);
    assert.ok(!(rendered instanceof Error), `${readmePath(factory)} ${String(rendered)}`);
    assert.equal(text, rendered, 'stale table: run `node --import tsx scripts/config-docs.ts`');
  });
}

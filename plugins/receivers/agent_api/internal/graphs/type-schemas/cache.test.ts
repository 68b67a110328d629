// The type schema cache on real files: an entry is used while the graph, the project files it
// imports and the project's tsconfig.json are unchanged, and a corrupt entry is a miss that the
// next write replaces.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { TypeSchemaCache } from './cache.ts';
import type { GraphTypeSchemas, SourceHashes } from './extract.ts';
import { fileHash } from './source-files.ts';

const SCHEMAS: GraphTypeSchemas = { '': { state: { type: 'object' }, input: null, output: null, config: null } };

describe('type schema cache', () => {
  let project: string;
  let cacheDir: string;
  let graph: string;
  let helper: string;
  const target = () => ({ graphId: 'g', path: graph, exportName: 'graph' });
  const hashes = (): SourceHashes => ({ [graph]: fileHash(graph)!, [helper]: fileHash(helper)! });

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'type-schema-cache-'));
    cacheDir = join(project, 'data', 'type-schemas');
    graph = join(project, 'graph.ts');
    helper = join(project, 'state.ts');
    writeFileSync(graph, "import { State } from './state.ts';\nexport const graph = State;\n");
    writeFileSync(helper, 'export const State = {};\n');
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('answers what was written while the files are unchanged, also to a new process', async () => {
    await new TypeSchemaCache(cacheDir).write(target(), SCHEMAS, hashes());
    assert.deepEqual(await new TypeSchemaCache(cacheDir).read(target()), SCHEMAS);
  });

  it('misses when an imported project file changed', async () => {
    await new TypeSchemaCache(cacheDir).write(target(), SCHEMAS, hashes());
    writeFileSync(helper, 'export const State = { changed: true };\n');
    assert.equal(await new TypeSchemaCache(cacheDir).read(target()), undefined);
  });

  it('misses when a tsconfig.json appears above the graph', async () => {
    await new TypeSchemaCache(cacheDir).write(target(), SCHEMAS, hashes());
    writeFileSync(join(project, 'tsconfig.json'), '{"compilerOptions":{"strict":false}}');
    assert.equal(await new TypeSchemaCache(cacheDir).read(target()), undefined);
  });

  it('misses for another graph id or export of the same file', async () => {
    await new TypeSchemaCache(cacheDir).write(target(), SCHEMAS, hashes());
    const cache = new TypeSchemaCache(cacheDir);
    assert.equal(await cache.read({ ...target(), graphId: 'other' }), undefined);
    assert.equal(await cache.read({ ...target(), exportName: 'other' }), undefined);
  });

  for (const [name, content] of [
    ['truncated', '{"format":1,"target":{"graphId":"g"'],
    ['not an object', 'null'],
    ['of another shape', '{"format":1,"schemas":{}}'],
  ] as const) {
    it(`a ${name} entry is a miss, and the next write replaces it`, async () => {
      const cache = new TypeSchemaCache(cacheDir);
      await cache.write(target(), SCHEMAS, hashes());
      writeFileSync(cache.entryPath(target()), content);
      assert.equal(await cache.read(target()), undefined);
      await cache.write(target(), SCHEMAS, hashes());
      assert.deepEqual(await cache.read(target()), SCHEMAS);
    });
  }
});

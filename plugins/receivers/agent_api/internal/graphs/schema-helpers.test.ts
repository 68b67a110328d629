// The Zod schema helpers come from the @langchain/langgraph the graph module resolves (where its
// withLangGraph extras are registered), and from the server's own copy when it resolves none.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as ownHelpers from '@langchain/langgraph/zod/schema';
import { schemaHelpersFor } from './schema-helpers.ts';

describe('schemaHelpersFor', () => {
  const project = mkdtempSync(join(tmpdir(), 'schema-helpers-'));
  after(() => rmSync(project, { recursive: true, force: true }));

  it("imports the ESM build of the graph's own @langchain/langgraph", async () => {
    const pkg = join(project, 'node_modules/@langchain/langgraph');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: '@langchain/langgraph',
        exports: {
          './package.json': './package.json',
          './zod/schema': { import: { default: './dist/schema.js' }, require: { default: './dist/schema.cjs' } },
        },
      }),
    );
    writeFileSync(join(pkg, 'dist/schema.js'), 'export const getUpdateTypeSchema = () => "the graph\'s copy";\n');
    const helpers = await schemaHelpersFor(join(project, 'graph.ts'));
    assert.equal(helpers.getUpdateTypeSchema({} as never), "the graph's copy");
  });

  it("falls back to the server's own helpers", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'schema-helpers-none-'));
    try {
      // A folder outside any project resolves no @langchain/langgraph of its own.
      const helpers = await schemaHelpersFor(join(elsewhere, 'graph.ts'));
      assert.equal(helpers.getUpdateTypeSchema, ownHelpers.getUpdateTypeSchema);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

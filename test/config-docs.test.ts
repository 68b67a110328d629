// Generated documentation stays in step with its sources: every component README's config table
// (the built-in components and the example plugin) with the component's schema, and README.md's
// environment-variable tables with the ready configs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import {
  ROOT_README,
  documentedFactories,
  envTable,
  readmePath,
  renderEnvSection,
  renderReadme,
} from '../scripts/config-docs.ts';

const factories = await documentedFactories();
for (const factory of factories) {
  it(`${factory.kind} ${factory.type}: README config table matches the schema`, () => {
    const text = readFileSync(readmePath(factory), 'utf8');
    const rendered = renderReadme(text, factory);
    assert.ok(!(rendered instanceof Error), `${readmePath(factory)} ${String(rendered)}`);
    assert.equal(text, rendered, 'stale table: run `node --import tsx scripts/config-docs.ts`');
  });
}

it('README.md lists every environment variable of every ready config', () => {
  const text = readFileSync(ROOT_README, 'utf8');
  const rendered = renderEnvSection(text, factories);
  assert.ok(!(rendered instanceof Error), String(rendered));
  assert.equal(text, rendered, 'stale environment tables: run `node --import tsx scripts/config-docs.ts`');
});

it('an environment table names each variable once, with its default, the keys it sets and their meaning', () => {
  const table = envTable(
    `receivers:
  otlp:
    port: \${env:HTTP_PORT:-4318}
    journal: { directory: "\${DATA_DIR:-../data}/journal" }
exporters:
  backend:
    api_key: "\${env:SERVICE_API_KEY}"
    persistent_queue: { directory: "\${DATA_DIR:-../data}/queue" }
service: { pipelines: {} }
`,
    factories,
  );
  const rows = table.trim().split('\n').slice(2);
  assert.equal(rows.length, 3);
  assert.match(rows[0]!, /^\| `HTTP_PORT` \| `4318` \| `receivers\.otlp\.port` \| TCP port; 0 picks a free one\. \|$/);
  assert.match(
    rows[1]!,
    /^\| `DATA_DIR` \| `\.\.\/data` \| `receivers\.otlp\.journal\.directory` = `\$DATA_DIR\/journal`<br>`exporters\.backend\.persistent_queue\.directory` = `\$DATA_DIR\/queue` \| Directory of the journal segments/,
  );
  assert.match(rows[2]!, /^\| `SERVICE_API_KEY` \| required \|/);
});

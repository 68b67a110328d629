// The debug exporter: conformance, and the JSON-lines file it can write.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nopHost, nopSettings, runComponentConformance } from '../../../src/pipeline/testing.ts';
import { tempDir } from '../../../src/testkit/files.ts';
import { debugExporterFactory } from './index.ts';

runComponentConformance(debugExporterFactory, {
  testdataDir: fileURLToPath(new URL('./testdata', import.meta.url)),
  sample: () => ({ runs: [] }),
});

describe('debug exporter', () => {
  it('appends each batch as one JSON line, with bigints as strings and bytes as base64', async () => {
    const dir = tempDir();
    const settings = nopSettings('exporter', 'debug', nopHost({ resolvePath: (path) => join(dir, path) }));
    const exporter = debugExporterFactory.create(settings, { verbosity: 'detailed', path: 'nested/out.jsonl' });
    await exporter.start(new AbortController().signal);
    await exporter.consume(
      {
        resourceSpans: [
          {
            resource: {
              attributes: [{ key: 'b', value: { type: 'bytes', value: new Uint8Array([1, 2, 3]) } }],
              droppedAttributesCount: 0,
            },
            schemaUrl: '',
            scopeSpans: [],
          },
        ],
      },
      { project: 'p1' },
    );
    await exporter.consume(
      { runs: [{ id: 'r', trace_id: 't', name: 'n', run_type: 'chain', start_time: 'x' }] },
      { project: 'p2' },
    );
    await exporter.shutdown(Date.now() + 1000);
    const lines = readFileSync(join(dir, 'nested/out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.length, 2);
    assert.deepEqual(lines[0].data.resourceSpans[0].resource.attributes[0].value, { type: 'bytes', value: 'AQID' });
    assert.equal(lines[0].kind, 'spans');
    assert.equal(lines[1].kind, 'runs');
    assert.equal(lines[1].project, 'p2');
    await assert.rejects(exporter.consume({ runs: [] }, { project: 'p' }), /shut down/);
  });
});

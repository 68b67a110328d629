// The debug exporter: conformance, and what it logs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nopSettings, runComponentConformance, captureLogs } from 'tracepipe/testing';
import { debugExporterFactory } from './index.ts';

runComponentConformance(debugExporterFactory, {
  testdataDir: fileURLToPath(new URL('./testdata', import.meta.url)),
  sample: () => ({ runs: [] }),
});

describe('debug exporter', () => {
  it('logs each batch, and with verbosity detailed its contents with bigints as strings and bytes as base64', async () => {
    const { logger, lines } = captureLogs();
    const settings = nopSettings('exporter', 'debug', undefined, { logger });
    const exporter = debugExporterFactory.create(settings, { verbosity: 'detailed' });
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
    const received = lines.filter((line) => line.msg === 'Received a batch.');
    assert.deepEqual(
      received.map((line) => [line.kind, line.items, line.project]),
      [
        ['spans', 0, 'p1'],
        ['runs', 1, 'p2'],
      ],
    );
    const contents = lines.filter((line) => line.msg === 'Batch contents.') as unknown as {
      data: { resourceSpans: { resource: { attributes: { value: unknown }[] } }[] };
    }[];
    assert.deepEqual(contents[0]!.data.resourceSpans[0]!.resource.attributes[0]!.value, {
      type: 'bytes',
      value: 'AQID',
    });
    await assert.rejects(exporter.consume({ runs: [] }, { project: 'p' }), /shut down/);
  });
});

// The batch processor's bound on its backlog (`max_backlog_runs`), in front of the real backend
// exporter and a backend on loopback that answers slowly: once the exporter stops taking batches
// (its sending queue full, waiting for room as the proxy ships it, or refusing), the batcher refuses
// new runs with a ThrottleError — the receivers' 429 — instead of holding every run it is sent; and
// every run it did accept is uploaded once the backend speeds up again. A burst that downstream
// takes at once is not a backlog (plugins/processors/batch/batch.test.ts).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Run } from 'tracepipe/plugin';
import { ThrottleError } from 'tracepipe/plugin';
import { configFor, nopSettings } from 'tracepipe/testing';
import { backendExporterFactory } from '../../plugins/exporters/backend/index.ts';
import type { BackendExporterConfig } from '../../plugins/exporters/backend/index.ts';
import { BackendStub } from '../../plugins/exporters/backend/testing/backend_stub.ts';
import { batchProcessorFactory } from '../../plugins/processors/batch/index.ts';
import type { BatchProcessorConfig } from '../../plugins/processors/batch/index.ts';
import { eventually } from '../../src/testkit/eventually.ts';

const BACKLOG = 300;
const TENANT = { project: 'default', apiKey: 'key-a' };

/** `count` root runs, each a trace of its own. */
function roots(count: number): Run[] {
  const start = new Date().toISOString();
  return Array.from({ length: count }, () => {
    const id = randomUUID();
    return { id, trace_id: id, name: 'root', run_type: 'chain', start_time: start, end_time: start, status: 'success' };
  });
}

let backend: BackendStub;
let url: string;
before(async () => {
  backend = new BackendStub();
  url = await backend.start();
});
after(async () => {
  await backend.close();
});

function pipeline(blockOnOverflow: boolean) {
  const exporterSettings = nopSettings('exporter', 'backend');
  const exporter = backendExporterFactory.create(
    exporterSettings,
    configFor<BackendExporterConfig>(backendExporterFactory, {
      endpoint: url,
      max_concurrent_uploads: 1,
      sending_queue: { queue_size: 1, block_on_overflow: blockOnOverflow },
      persistent_queue: { enabled: false },
    }),
  );
  const settings = nopSettings('processor', 'batch');
  const processor = batchProcessorFactory.create(
    settings,
    configFor<BatchProcessorConfig>(batchProcessorFactory, { flush_interval_ms: 20, max_backlog_runs: BACKLOG }),
    exporter,
  );
  const metric = async (name: string): Promise<number> => {
    const found = await settings.host.metrics.getSingleMetric(name)?.get();
    return (found?.values ?? []).reduce((sum, value) => sum + value.value, 0);
  };
  return { exporter, processor, metric };
}

/**
 * Offers requests of 100 runs until the batcher refuses one; returns the ids it accepted. Each
 * request waits for the next turn of the event loop, as requests from a client do, so that the
 * batcher's flush timer runs between them.
 */
async function offerUntilRefused(processor: ReturnType<typeof pipeline>['processor']): Promise<Set<string>> {
  const accepted = new Set<string>();
  for (let request = 0; request < 500; request++) {
    const runs = roots(100);
    try {
      await processor.consume({ runs }, TENANT);
    } catch (error) {
      assert.ok(error instanceof ThrottleError, String(error));
      assert.match(error.message, /downstream is behind/);
      return accepted;
    }
    for (const run of runs) accepted.add(run.id);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.fail(`accepted ${accepted.size} runs without refusing any`);
}

describe('batch: a bound on runs awaiting a downstream that is behind', () => {
  for (const blockOnOverflow of [true, false]) {
    it(`refuses new runs once the exporter is behind (block_on_overflow: ${blockOnOverflow}), and uploads every run it took`, async () => {
      backend.answer = () => ({ status: 202, delayMs: 200 });
      const { exporter, processor, metric } = pipeline(blockOnOverflow);
      await exporter.start(new AbortController().signal);
      await processor.start(new AbortController().signal);
      try {
        const before = backend.accepted.size;
        const accepted = await offerUntilRefused(processor);
        // What it holds past the bound is what it took before downstream counted as behind.
        assert.ok((await metric('tracepipe_batch_backlog_runs')) > BACKLOG - 100);
        assert.ok((await metric('tracepipe_batch_throttled_runs_total')) >= 100);
        backend.answer = () => ({ status: 202 });
        await eventually(() => assert.equal(backend.accepted.size - before, accepted.size), { timeoutMs: 60_000 });
        for (const id of accepted) assert.ok(backend.accepted.has(id), `run ${id} was not uploaded`);
        await eventually(async () => assert.equal(await metric('tracepipe_batch_backlog_runs'), 0));
        await processor.consume({ runs: roots(100) }, TENANT); // taken again
      } finally {
        backend.answer = () => ({ status: 202 });
        await processor.shutdown(Date.now() + 10_000);
        await exporter.shutdown(Date.now() + 10_000);
      }
    });
  }
});

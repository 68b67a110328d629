// Tests of `newExporter`: the component it makes from `encode`, `push` and a codec queues what
// `encode` returns and pushes it, dead-letters the items `encode` left out only once the rest is
// queued (a batch the full queue refuses is retried whole by its client, so nothing of it is
// dead-lettered), refuses batches once stopping and closes the exporter's resources after the
// queue. The destination is the exporter's own `push`: what is tested is everything around it.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { RunBatch } from '../model/runs.ts';
import { ThrottleError } from '../pipeline/errors.ts';
import { nopSettings } from '../pipeline/testing.ts';
import { eventually } from '../testkit/eventually.ts';
import { metricValue } from '../testkit/observe.ts';
import { newExporter } from './new_exporter.ts';
import type { ExporterConfig } from './new_exporter.ts';
import type { ExportRequest, RequestCodec } from './queued_exporter.ts';
import { sent } from './verdict.ts';

interface Ids extends ExportRequest {
  readonly ids: readonly string[];
}

const codec: RequestCodec<Ids, object> = {
  encode: (request) => ({ header: {}, body: Buffer.from(JSON.stringify(request.ids)) }),
  decode: (header, body) => ({ ids: JSON.parse(body.toString('utf8')) as string[], items: header.items }),
};

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'new-exporter-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function config(queueSize: number): ExporterConfig {
  return {
    max_concurrent_uploads: 1,
    sending_queue: { queue_size: queueSize, max_bytes: 1 << 20, block_on_overflow: false, overflow_to_disk: false },
    retry_on_failure: {
      max_retries: 0,
      initial_backoff_ms: 0,
      max_backoff_ms: 1,
      multiplier: 1,
      max_retry_after_ms: 0,
    },
    persistent_queue: { enabled: true, directory, max_bytes: 1 << 20, replay_interval_ms: 60000 },
  };
}

/** Runs named `bad-*` cannot be encoded; `push` waits for `gate` before answering `sent`. */
function exporter(queueSize: number, gate: Promise<void> = Promise.resolve()) {
  const settings = nopSettings('exporter', 'ids');
  const pushed: string[][] = [];
  let closed = false;
  const component = newExporter(settings, config(queueSize), {
    dataType: 'runs',
    endpoint: 'http://127.0.0.1:1/ids',
    codec,
    close: () => (closed = true),
    encode: (batch: RunBatch) => {
      const ids = batch.runs.map((run) => String(run.id));
      const good = ids.filter((id) => !id.startsWith('bad-'));
      const unencodable = ids
        .filter((id) => id.startsWith('bad-'))
        .map((id) => ({ error: new Error(`${id} is not JSON`), record: { run_id: id } }));
      const request: Ids = { ids: good, items: good.length };
      return { ...(good.length > 0 ? { request } : {}), unencodable };
    },
    push: async (request) => {
      await gate;
      pushed.push([...request.ids]);
      return sent();
    },
  });
  return { component, pushed, settings, isClosed: () => closed };
}

function runs(...ids: string[]): RunBatch {
  return { runs: ids.map((id) => ({ id }) as RunBatch['runs'][number]) };
}

async function deadLetters(): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(directory, 'dead-letter.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('newExporter', () => {
  it('pushes what encode returns and dead-letters the items it left out, counted as unencodable', async () => {
    const { component, pushed, settings, isClosed } = exporter(4);
    await component.start(new AbortController().signal);
    await component.consume(runs('a', 'bad-1', 'b'), { project: 'p' });
    await eventually(() => assert.deepEqual(pushed, [['a', 'b']]));
    assert.deepEqual(
      (await deadLetters()).map(({ reason, run_id, error }) => ({ reason, run_id, error })),
      [{ reason: 'unencodable', run_id: 'bad-1', error: 'bad-1 is not JSON' }],
    );
    const dropped = await metricValue(settings.host.metrics, 'tracepipe_component_items_dropped_total', {
      reason: 'unencodable',
    });
    assert.equal(dropped, 1);
    await component.shutdown(Date.now() + 5000);
    assert.equal(isClosed(), true);
    await assert.rejects(component.consume(runs('c'), { project: 'p' }), /shutting down/);
  });

  it('dead-letters nothing of a batch the full queue refuses: its client sends it again whole', async () => {
    let open!: () => void;
    const { component, pushed } = exporter(1, new Promise<void>((resolve) => (open = resolve)));
    await component.start(new AbortController().signal);
    await component.consume(runs('a'), { project: 'p' }); // taken by the sender, which waits
    await eventually(async () => {
      await component.consume(runs('b'), { project: 'p' }); // fills the queue once the sender holds `a`
    });
    await assert.rejects(component.consume(runs('c', 'bad-1'), { project: 'p' }), ThrottleError);
    assert.deepEqual(await deadLetters(), []);
    open();
    await eventually(() => assert.deepEqual(pushed, [['a'], ['b']]));
    await component.shutdown(Date.now() + 5000);
  });
});

// The in-process stream broker: a run's log starts with one `metadata` event however often it is
// opened, and the logs of finished runs are released (after their grace period, and beyond the
// count bound), so that a long-lived server does not keep every run's events.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamBroker, metadataEvent } from './broker.ts';
import type { StreamEvent } from './broker.ts';

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('StreamBroker', () => {
  it('puts the metadata event first once, when the run is created; a worker opening the log again adds none', async () => {
    const broker = new StreamBroker({ maxEvents: 100, maxFinishedRuns: 10 });
    broker.open('run', metadataEvent('run'));
    // The worker takes the run: it opens the log with the same first event.
    broker.open('run', metadataEvent('run'));
    broker.publish('run', 'values', { n: 1 });
    broker.finish('run');
    // Reopened for a later execution: the stream continues, still with one metadata.
    broker.open('run', metadataEvent('run'), { reopen: true });
    broker.publish('run', 'values', { n: 2 });
    broker.finish('run');
    assert.deepEqual(await collect(broker.subscribe('run', -1)), [
      { id: 0, event: 'metadata', data: { run_id: 'run', attempt: 1 } },
      { id: 1, event: 'values', data: { n: 1 } },
      { id: 2, event: 'values', data: { n: 2 } },
    ]);
  });

  it('a log that lost its head (a restart) gets the metadata when the worker opens it', async () => {
    const broker = new StreamBroker({ maxEvents: 100, maxFinishedRuns: 10 });
    broker.open('resumed');
    broker.open('resumed', metadataEvent('resumed'));
    broker.finish('resumed');
    assert.deepEqual(
      (await collect(broker.subscribe('resumed', -1))).map((event) => [event.id, event.event]),
      [[0, 'metadata']],
    );
  });

  it('releases the logs of finished runs after their grace period, and beyond the count bound at once', async () => {
    let clock = 0;
    const broker = new StreamBroker({ maxEvents: 100, maxFinishedRuns: 3, finishedTtlMs: 1000, now: () => clock });
    for (let n = 0; n < 5; n++) {
      broker.open(`run-${n}`, metadataEvent(`run-${n}`));
      broker.publish(`run-${n}`, 'values', { n });
    }
    broker.open('live', metadataEvent('live'));
    assert.equal(broker.size, 6);
    for (let n = 0; n < 5; n++) broker.finish(`run-${n}`);
    assert.equal(broker.size, 4, 'three finished logs and the live one');
    // Within the grace, a late joiner still replays a finished run.
    clock = 999;
    assert.equal((await collect(broker.subscribe('run-4', -1))).length, 2);
    clock = 1000;
    broker.open('next', metadataEvent('next'));
    assert.equal(broker.size, 2, 'the finished logs went with their grace; the live ones stay');
    broker.finish('live');
    broker.finish('next');
    clock = 2000;
    broker.open('later');
    broker.discard('later');
    assert.equal(broker.size, 0, 'nothing is held once every run ended and the grace passed');
    assert.deepEqual(await collect(broker.subscribe('run-4', -1)), []);
  });
});

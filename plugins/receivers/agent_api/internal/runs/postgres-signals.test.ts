// Two instances on one real PostgreSQL database, without Redis: their coordinators hear each
// other through LISTEN/NOTIFY. A wait for a run executing on the other instance ends when that
// instance ends the run's log, reading the run's record only then (not every `pollMs`); a cancel
// settled on one stops the execution on the other; a wake-up reaches the other's idle workers;
// and while the listening connection is down the records are watched instead, until it is back.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { eventually } from 'tracepipe/testing';
import type { RunRecord, Storage } from '../storage/storage.ts';
import { freshDatabase, postgresAvailable, admin } from '../../testing/postgres.ts';
import type { TestDatabase } from '../../testing/postgres.ts';
import { StreamBroker } from './broker.ts';
import { RunCoordinator } from './coordinator.ts';
import { LISTENER_NAME, PostgresRunSignals } from './postgres-signals.ts';

const available = await postgresAvailable();
const silent = pino({ level: 'silent' });

/** The run records both instances read: the shared database, as far as the coordinator looks at it. */
const records = new Map<string, Pick<RunRecord, 'run_id' | 'status'>>();

/** One server instance: its coordinator, broker and signals, with a runner and workers that only record what they are told. */
function instance(uri: string) {
  const reads: string[] = [];
  const active = new Set<string>();
  const aborted: string[] = [];
  let wakes = 0;
  let resyncs = 0;
  const storage = {
    runs: {
      get: async (runId: string) => {
        reads.push(runId);
        return records.get(runId) as RunRecord | undefined;
      },
    },
  } as Storage;
  const runner = {
    activeIds: (): ReadonlySet<string> => active,
    abort: (runId: string, action: 'interrupt' | 'rollback' | 'lost') => {
      if (!active.has(runId)) return false;
      active.delete(runId);
      aborted.push(`${runId}:${action}`);
      return true;
    },
    result: () => undefined,
  };
  const workers = { wakeIdle: () => false, notify: () => undefined };
  let coordinator: RunCoordinator | undefined;
  const signals = new PostgresRunSignals({
    databaseUri: uri,
    connectTimeoutMs: 10_000,
    wakeWorkers: () => wakes++,
    onEnded: (runId, elsewhere) => coordinator?.ended(runId, elsewhere),
    onResync: () => {
      resyncs++;
      coordinator?.resync();
    },
    logger: silent,
  });
  const broker = new StreamBroker({ maxEvents: 100, maxFinishedRuns: 100, onEnd: (runId) => signals.ended(runId) });
  coordinator = new RunCoordinator(storage, broker, runner, () => workers, signals, { pollMs: 20 });
  return {
    signals,
    broker,
    coordinator,
    reads,
    active,
    aborted,
    wakes: () => wakes,
    resyncs: () => resyncs,
  };
}

describe('PostgreSQL run signals between two instances', { skip: available ? false : 'no PostgreSQL server' }, () => {
  let database: TestDatabase;
  let a: ReturnType<typeof instance>;
  let b: ReturnType<typeof instance>;

  before(async () => {
    database = await freshDatabase();
    a = instance(database.uri);
    b = instance(database.uri);
    await a.signals.start();
    await b.signals.start();
    a.coordinator.start();
    b.coordinator.start();
  });

  after(async () => {
    for (const each of [a, b]) {
      each?.coordinator.stop();
      await each?.signals.stop();
    }
    await database?.drop();
  });

  it('a wait for a run executing elsewhere reads its record when that instance ends it, not every pollMs', async () => {
    records.set('run-1', { run_id: 'run-1', status: 'running' });
    a.active.add('run-1');
    const waited = b.coordinator.waitFor('run-1');
    await eventually(() => assert.equal(b.reads.filter((id) => id === 'run-1').length, 1));
    // Notifications go out in order on one connection: once the wake-ups sent after the wait
    // began have arrived, a watch polling every 20 ms would have read the record again meanwhile.
    const wakes = b.wakes();
    for (let n = 0; n < 10; n++) {
      a.signals.wake();
      await admin((client) => client.query('SELECT 1'), database.uri);
    }
    await eventually(() => assert.equal(b.wakes(), wakes + 10));
    assert.equal(b.reads.filter((id) => id === 'run-1').length, 1);

    records.set('run-1', { run_id: 'run-1', status: 'success' });
    a.active.delete('run-1');
    a.broker.finish('run-1');
    await waited;
    assert.equal(b.reads.filter((id) => id === 'run-1').length, 2);
  });

  it('a cancel settled on one instance stops the run on the instance executing it', async () => {
    records.set('run-2', { run_id: 'run-2', status: 'running' });
    a.active.add('run-2');
    // What the run service does when no worker here holds the run: settle the record, end the log.
    assert.equal(await b.coordinator.abort('run-2', 'interrupt'), false);
    records.set('run-2', { run_id: 'run-2', status: 'interrupted' });
    b.coordinator.close('run-2');
    await eventually(() => assert.deepEqual(a.aborted, ['run-2:interrupt']));

    records.set('run-3', { run_id: 'run-3', status: 'running' });
    a.active.add('run-3');
    records.delete('run-3');
    b.coordinator.discard('run-3');
    await eventually(() => assert.deepEqual(a.aborted, ['run-2:interrupt', 'run-3:rollback']));
  });

  it('watches the records while the listening connection is down, and reads them all once it is back', async () => {
    records.set('run-4', { run_id: 'run-4', status: 'running' });
    a.active.add('run-4');
    const resyncs = b.resyncs();
    // Cut both listeners: the run ends without any notification reaching the waiting instance.
    await admin(
      (client) =>
        client.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
          [database.name, LISTENER_NAME],
        ),
      database.uri,
    );
    await eventually(() => assert.equal(b.signals.live(), false));
    const waited = b.coordinator.waitFor('run-4');
    records.set('run-4', { run_id: 'run-4', status: 'success' });
    a.active.delete('run-4');
    await waited;
    await eventually(() => assert.equal(b.signals.live() && a.signals.live(), true), { timeoutMs: 30_000 });
    assert.equal(b.resyncs(), resyncs + 1);

    // Back: notifications reach it again.
    const wakes = b.wakes();
    a.signals.wake();
    await eventually(() => assert.equal(b.wakes(), wakes + 1));
  });
});

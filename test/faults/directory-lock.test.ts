// Two proxies on one DATA_DIR: the second is refused at start, with an error naming the directory
// and the process that holds it, since both would replay and delete the same journal segments and
// queue files. The first is then killed with SIGKILL while it holds acknowledged spans (the
// backend down): the kernel drops its locks with it, so a new proxy on the same DATA_DIR starts at
// once and delivers them from the journal.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DirectoryLock, DirectoryLockedError } from '../../src/journal/directory_lock.ts';
import { eventually } from '../../src/testkit/eventually.ts';
import { FaultLab, LoadSender, ProxyProcess, mode } from './harness.ts';

describe('fault: a second proxy on the same DATA_DIR', () => {
  const lab = new FaultLab();
  after(() => lab.cleanup());

  it('is refused while the first runs; after kill -9 of the first, a new one starts and replays its journal', async () => {
    const backend = lab.backend();
    await backend.start(mode.down());
    const dataDir = await lab.tempDir('tp-lock-data-');
    const first = await ProxyProcess.start({ endpoint: backend.url, dataDir });

    // Each directory it keeps is held: both receivers' journals and the exporter's on-disk queue
    // (every component has started once both receivers listen; exporters start first).
    await eventually(() => first.find('Receiving LangSmith SDK runs.').length > 0);
    for (const name of ['journal', 'langsmith-journal', 'queue']) {
      assert.throws(
        () => DirectoryLock.acquire(join(dataDir, name), 'test').release(),
        (error: unknown) => error instanceof DirectoryLockedError && error.holder?.pid === first.child.pid,
        `${name} is not locked by the running proxy`,
      );
    }
    const refused = await ProxyProcess.start({ endpoint: backend.url, dataDir, startTimeoutMs: 30_000 }).then(
      (second) => second,
      (error: unknown) => error as Error,
    );
    assert.ok(refused instanceof Error, 'a second proxy started on the same DATA_DIR');
    assert.match(
      refused.message,
      new RegExp(`directory ${dataDir}/[a-z-]+ is in use by process ${first.child.pid} on `),
    );

    const load = lab.track(
      new LoadSender({
        url: first.tracesUrl,
        spansPerRequest: 50,
        maxRequests: 20,
        concurrency: 2,
        encoding: 'protobuf',
        maxDurationMs: 60_000,
        requestTimeoutMs: 20_000,
      }).start(),
    );
    await load.done;
    assert.ok(load.acked.size > 0, 'nothing was acknowledged');
    await first.kill9();
    await backend.set(mode.ok());
    const restarted = await first.restart();
    await backend.waitForAll(load.acked, 60_000);
    assert.deepEqual(backend.missing(load.acked), []);
    await restarted.sigterm();
  });
});

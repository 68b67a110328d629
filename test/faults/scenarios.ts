// The fault matrix, one function per fault: each starts a capture backend and the real proxy
// (configs/proxy.yaml through its environment variables), sends known spans, applies the fault,
// recovers (backend back, restart on the same DATA_DIR where the fault ended the process), waits —
// bounded — for every acknowledged run at the backend, stops the proxy with SIGTERM, and returns the
// figures. They do not assert: test/faults/*.test.ts assert on the results, test/faults/matrix.ts
// prints them. Sizes are parameters, so that the benchmark can run the same scenarios bigger.

import type { CaptureBackend, ExitReport, FaultLab, FaultResult, ProxyOptions } from './harness.ts';
import { eventually } from '../../src/testkit/eventually.ts';
import { LoadSender, ProxyProcess, diskQuiet, mode, proxyConfigVariant, tally } from './harness.ts';

export interface LoadSize {
  /** Spans to send (at most; a fault may stop the sender earlier). */
  readonly spans: number;
  readonly perRequest?: number;
  readonly concurrency?: number;
  readonly encoding?: 'protobuf' | 'json';
  /** Random bytes per span, so that uploads and the disk queue do not compress 20:1 (see genAiRequest). */
  readonly entropyBytes?: number;
}

/** How long a scenario waits for delivery after recovery before giving up and counting what is missing. */
export interface Bounds {
  readonly drainTimeoutMs?: number;
}

const DEFAULT_DRAIN_MS = 30_000;

function sender(lab: FaultLab, proxy: ProxyProcess, size: LoadSize, more: { maxDurationMs?: number } = {}): LoadSender {
  const perRequest = size.perRequest ?? 100;
  return lab.track(
    new LoadSender({
      url: proxy.tracesUrl,
      spansPerRequest: perRequest,
      maxRequests: Math.ceil(size.spans / perRequest),
      concurrency: size.concurrency ?? 4,
      encoding: size.encoding ?? 'protobuf',
      maxDurationMs: more.maxDurationMs ?? 60_000,
      requestTimeoutMs: 20_000,
      ...(size.entropyBytes ? { entropyBytes: size.entropyBytes } : {}),
    }).start(),
  );
}

async function startProxy(
  lab: FaultLab,
  backend: CaptureBackend,
  options: Partial<ProxyOptions> = {},
): Promise<ProxyProcess> {
  return ProxyProcess.start({
    endpoint: backend.url,
    dataDir: options.dataDir ?? (await lab.tempDir('tp-fault-data-')),
    ...options,
  });
}

/** Waits (bounded) for every acknowledged run; never throws on the timeout — what is missing is the result. */
async function drain(backend: CaptureBackend, senders: LoadSender | LoadSender[], timeoutMs: number): Promise<void> {
  const list = Array.isArray(senders) ? senders : [senders];
  const ids = new Set<string>();
  for (const s of list) for (const id of s.acked) ids.add(id);
  await backend.waitForAll(ids, timeoutMs).catch(() => undefined);
}

/** SIGTERM for the last process of a scenario, when it still runs. */
async function finish(proxy: ProxyProcess): Promise<ExitReport> {
  return proxy.sigterm();
}

/** Healthy backend: every acknowledged span is delivered, once; SIGTERM then exits 0 with "Stopped cleanly.". */
export async function healthy(
  lab: FaultLab,
  size: LoadSize = { spans: 10_000 },
  bounds: Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.ok());
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  await load.done;
  const recoveryAt = Date.now();
  await drain(backend, load, bounds.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(proxy);
  return tally({ fault: 'none (healthy backend)', sender: load, backend, recoveryAt, finalExit, proxies: [proxy] });
}

/**
 * Healthy backend, SIGTERM the moment the last request is acknowledged: the shutdown flushes what
 * the batcher and the exporter hold. No restart: everything must be at the backend when it exits.
 */
export async function sigtermFlush(lab: FaultLab, size: LoadSize = { spans: 10_000 }): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.ok());
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  await load.done;
  const stoppedAt = Date.now();
  const faultExit = await proxy.sigterm();
  return tally({
    fault: 'SIGTERM right after the last ack, healthy backend',
    sender: load,
    backend,
    recoveryAt: stoppedAt,
    faultExit,
    proxies: [proxy],
  });
}

/**
 * Backend answering in `slowMs`; SIGTERM once `sigtermAfterSpans` are acknowledged, while the send
 * goes on. Then the backend answers at once and the proxy restarts on the same DATA_DIR to drain
 * what the stopped one kept.
 */
export async function slowSigterm(
  lab: FaultLab,
  size: LoadSize = { spans: 20_000, concurrency: 8 },
  options: { slowMs?: number; sigtermAfterSpans?: number; shutdownTimeoutMs?: number } & Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.slow(options.slowMs ?? 2000));
  const proxy = await startProxy(
    lab,
    backend,
    options.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: options.shutdownTimeoutMs } : {},
  );
  const load = sender(lab, proxy, size);
  await load.waitForAcked(options.sigtermAfterSpans ?? Math.floor(size.spans * 0.8), 60_000);
  const faultExit = await proxy.sigterm();
  await load.stop();
  const stoppedWith = { delivered: backend.distinct, acked: load.acked.size };
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  const restarted = await proxy.restart();
  await drain(backend, load, options.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(restarted);
  return tally({
    fault: `backend slow (${options.slowMs ?? 2000} ms), SIGTERM during the send`,
    sender: load,
    backend,
    recoveryAt,
    faultExit,
    finalExit,
    proxies: [proxy, restarted],
    details: { at_exit: stoppedWith },
  });
}

/**
 * Backend hung (never answers); every request sent, then SIGTERM with a short shutdown timeout.
 * The backend comes back and the proxy restarts on the same DATA_DIR.
 */
export async function hungSigterm(
  lab: FaultLab,
  size: LoadSize = { spans: 20_000, concurrency: 8 },
  options: { shutdownTimeoutMs?: number } & Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.hung());
  const proxy = await startProxy(lab, backend, { shutdownTimeoutMs: options.shutdownTimeoutMs ?? 2000 });
  const load = sender(lab, proxy, size);
  await load.done;
  const faultExit = await proxy.sigterm();
  const stoppedWith = { delivered: backend.distinct, acked: load.acked.size };
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  const restarted = await proxy.restart();
  await drain(backend, load, options.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(restarted);
  return tally({
    fault: `backend hung, SIGTERM (shutdown timeout ${options.shutdownTimeoutMs ?? 2000} ms)`,
    sender: load,
    backend,
    recoveryAt,
    faultExit,
    finalExit,
    proxies: [proxy, restarted],
    details: { at_exit: stoppedWith },
  });
}

/**
 * The lossy configuration on purpose: proxy.yaml without the journal and without the disk queue,
 * backend hung, SIGTERM with a short shutdown timeout. Nothing can keep the acknowledged spans, so
 * the proxy must say so: a non-zero exit code and no "Stopped cleanly.".
 */
export async function lossySigterm(
  lab: FaultLab,
  size: LoadSize = { spans: 5_000 },
  options: { shutdownTimeoutMs?: number } = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.hung());
  const dataDir = await lab.tempDir('tp-fault-data-');
  const config = proxyConfigVariant(dataDir, { journal: false, persistentQueue: false });
  const proxy = await startProxy(lab, backend, {
    dataDir,
    config,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 2000,
  });
  const load = sender(lab, proxy, size);
  await load.done;
  const faultExit = await proxy.sigterm();
  // Nothing can arrive any more: no process is left, and nothing was kept for a next one.
  return tally({
    fault: 'no journal, no disk queue, backend hung, SIGTERM',
    sender: load,
    backend,
    faultExit,
    proxies: [proxy],
  });
}

/**
 * Backend down (connections refused) while load flows; kill -9 once `killAfterSpans` are
 * acknowledged, the sender still sending. The backend comes back on its port and the proxy
 * restarts on the same DATA_DIR.
 */
export async function kill9Outage(
  lab: FaultLab,
  size: LoadSize = { spans: 20_000, perRequest: 50, concurrency: 4 },
  options: { killAfterSpans?: number } & Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.down());
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  await load.waitForAcked(options.killAfterSpans ?? Math.floor(size.spans / 2), 60_000);
  const faultExit = await proxy.kill9();
  await load.stop();
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  const restarted = await proxy.restart();
  await drain(backend, load, options.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(restarted);
  return tally({
    fault: 'backend down, kill -9 with load flowing',
    sender: load,
    backend,
    recoveryAt,
    faultExit,
    finalExit,
    proxies: [proxy, restarted],
  });
}

/** Backend hung; every request sent, then kill -9; the backend answers again and the proxy restarts. */
export async function kill9Hung(
  lab: FaultLab,
  size: LoadSize = { spans: 20_000, concurrency: 8 },
  bounds: Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.hung());
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  await load.done;
  const faultExit = await proxy.kill9();
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  const restarted = await proxy.restart();
  await drain(backend, load, bounds.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(restarted);
  return tally({
    fault: 'backend hung, kill -9',
    sender: load,
    backend,
    recoveryAt,
    faultExit,
    finalExit,
    proxies: [proxy, restarted],
  });
}

/**
 * One `429 Retry-After: <retryAfterS>` (the first upload), then a healthy backend. The proxy must
 * not sit on the data for an hour: with the default cap on Retry-After (30 s) everything arrives
 * within the drain bound (default 45 s after the 429). No restart.
 */
export async function throttleOnce(
  lab: FaultLab,
  size: LoadSize = { spans: 6_000 },
  options: { retryAfterS?: number; times?: number } & Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.throttle(429, options.retryAfterS ?? 3600, options.times ?? 1));
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  // Recovery is the moment the backend stopped throttling (it answers 2xx from the next upload on).
  await eventually(() => backend.mode.kind === 'ok', { timeoutMs: 60_000, message: 'the throttled upload' });
  const recoveryAt = Date.now();
  await load.done;
  await drain(backend, load, options.drainTimeoutMs ?? 45_000);
  const stillHeld = backend.missing(load.acked).length;
  const finalExit = await finish(proxy);
  return tally({
    fault: `one 429 Retry-After: ${options.retryAfterS ?? 3600}`,
    sender: load,
    backend,
    recoveryAt,
    finalExit,
    proxies: [proxy],
    details: { missing_when_the_wait_ended: stillHeld },
  });
}

/** A backend answering 503 to everything for a while, then healthy; no restart. */
export async function errorOutage(
  lab: FaultLab,
  size: LoadSize = { spans: 10_000 },
  options: { status?: number } & Bounds = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.error(options.status ?? 503));
  const proxy = await startProxy(lab, backend);
  const load = sender(lab, proxy, size);
  await load.done;
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  await drain(backend, load, options.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
  const finalExit = await finish(proxy);
  return tally({
    fault: `backend answering ${options.status ?? 503}, then healthy`,
    sender: load,
    backend,
    recoveryAt,
    finalExit,
    proxies: [proxy],
  });
}

export interface DiskFullOptions extends Bounds {
  /** JOURNAL_MAX_BYTES: the operator's cap. */
  readonly journalMaxBytes?: number;
  /** Put DATA_DIR on this directory (a small tmpfs) instead of a fresh temp dir. */
  readonly dataDir?: string;
  /** After recovery: how many requests (of the load's shape) must be acknowledged again, and within how long. */
  readonly acceptAgainRequests?: number;
  readonly acceptAgainTimeoutMs?: number;
  /** After the final SIGTERM, how long a restarted proxy gets to deliver what is still missing. */
  readonly restartDrainTimeoutMs?: number;
  readonly label?: string;
}

/**
 * No room for the journal (its cap reached, or the disk itself full) while the backend is down:
 * requests the proxy cannot keep must be refused (503 with Retry-After), and what it acknowledged
 * must arrive once the backend is back — without a restart. Then the proxy must accept requests
 * again, more of them than fill the journal or the disk (see acceptAgainRequests). The result counts
 * what arrived without a restart; `details.after_restart` says whether a restart on the same
 * DATA_DIR delivers what was still missing (kept, but stuck) or not (lost).
 */
export async function diskFull(
  lab: FaultLab,
  size: LoadSize = { spans: 25_000, entropyBytes: 256 },
  options: DiskFullOptions = {},
): Promise<FaultResult> {
  const backend = lab.backend();
  await backend.start(mode.down());
  const dataDir = options.dataDir ?? (await lab.tempDir('tp-fault-data-'));
  const proxy = await startProxy(lab, backend, {
    dataDir,
    ...(options.journalMaxBytes !== undefined ? { env: { JOURNAL_MAX_BYTES: String(options.journalMaxBytes) } } : {}),
  });
  const load = sender(lab, proxy, size);
  await load.done;
  // The backend stays down until the proxy has written all it is going to (batches that used up
  // their retries go to the disk queue): the outage lasts until the disk is as full as it gets.
  const dataDirBytes = await diskQuiet(dataDir, 3000, 30_000);
  const whileFull = load.summary();
  await backend.set(mode.ok());
  const recoveryAt = Date.now();
  await drain(backend, load, options.drainTimeoutMs ?? 15_000);

  // Recovered: the proxy must take requests again — not just one, but more than the journal (or
  // the disk) could hold at once: `acceptAgainRequests` requests of the same shape, one at a time,
  // each sent again after 250 ms while it is refused, within `acceptAgainTimeoutMs`.
  const againRequests = options.acceptAgainRequests ?? 60;
  const again = lab.track(
    new LoadSender({
      url: proxy.tracesUrl,
      spansPerRequest: size.perRequest ?? 100,
      maxRequests: againRequests,
      concurrency: 1,
      // A bound on a hang, not a speed: freed journal and disk-queue room comes back as settled
      // segments are retired, which takes longer on two cores shared with other work.
      maxDurationMs: options.acceptAgainTimeoutMs ?? 45_000,
      requestTimeoutMs: 10_000,
      retryRefusedAfterMs: 250,
      ...(size.entropyBytes ? { entropyBytes: size.entropyBytes } : {}),
    }).start(),
  );
  const againSummary = await again.done;
  const acceptedAgain = againSummary.ackedRequests === againRequests;
  await drain(backend, [load, again], 10_000);
  const finalExit = await finish(proxy);
  const result = tally({
    fault: options.label ?? `journal cap ${options.journalMaxBytes ?? 'default'} bytes, backend down`,
    sender: [load, again],
    drainOf: load,
    backend,
    recoveryAt,
    finalExit,
    proxies: [proxy],
    details: {
      while_full: {
        acked_spans: whileFull.ackedSpans,
        refused_by_status: whileFull.refusedByStatus,
        refused_without_retry_after: whileFull.refusedWithoutRetryAfter,
        retry_after_values: [
          ...new Set(load.records.filter((r) => r.outcome === 'refused').map((r) => r.retryAfter ?? 'none')),
        ],
        failures: whileFull.failures,
      },
      data_dir_bytes_during_the_outage: dataDirBytes,
      accepted_again: acceptedAgain,
      after_recovery: {
        requests: againRequests,
        acked: againSummary.ackedRequests,
        refusals: againSummary.refusedRequests,
        refused_by_status: againSummary.refusedByStatus,
        failures: againSummary.failures,
      },
    },
  });
  if (result.lost === 0) return result;

  // Something acknowledged did not arrive: kept in the journal for the next start, or lost?
  const restarted = await proxy.restart();
  await drain(backend, [load, again], options.restartDrainTimeoutMs ?? 10_000);
  const restartExit = await finish(restarted);
  const afterRestart = tally({ fault: result.fault, sender: [load, again], backend, proxies: [restarted] });
  return {
    ...result,
    details: {
      ...result.details,
      after_restart: {
        delivered: afterRestart.delivered,
        lost: afterRestart.lost,
        duplicates: afterRestart.duplicates,
        exit: restartExit.code,
        logged: afterRestart.logged,
      },
    },
  };
}

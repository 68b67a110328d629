// The stream broker in Redis, for several server instances sharing one database: each run's events
// go to a Redis Stream of their own, so a client may follow a run, or join it after `Last-Event-ID`,
// on any instance, whichever one executes it.
//
// Layout (`<p>` is the key prefix, `{id}` a hash tag keeping one run's keys on one cluster slot):
//   <p>run:{id}:events      the Stream; entry `n-1` is event `n` (SSE id `n`, from 0, as in the
//                           in-process broker); fields k (kind: ev | end | discard | open),
//                           e (event name), d (JSON data), w/n (writer and its write counter)
//   <p>run:{id}:open        set by `open` so that readers wait on a run that has no event yet
//   <p>run:{id}:discarded   the run was deleted (what `wasDiscarded` answers)
//   <p>run:{id}             pub/sub channel: "an entry was appended" (message: its id and kind)
//   <p>thread:{id}:runs     pub/sub channel: "a run was created on the thread" (message: its id),
//                           what a thread's stream follows; nothing is kept
// Appends run one Lua script (number, XADD with `MAXLEN ~`, expiry, PUBLISH) so positions are
// assigned atomically by whichever instance writes. A `first` append (the run's `metadata`, see
// `EventBroker.open`) is written as an `ev` entry only when the Stream is empty, so of the instance
// that created the run and the one that executes it, only one puts it there. A live log expires a day after its last
// event; an ended one `endedTtlMs` after its end marker. The creator's open (`create`) never makes
// an ended log live again: it may reach Redis after another instance has executed and ended the run
// (the run is claimable as soon as its row commits), and a wait on that run would never end.
//
// Readers are woken by pub/sub and then read with XRANGE on the shared command connection, rather
// than each blocking a connection of its own in XREAD BLOCK: an instance needs two connections
// however many streams it serves, and pub/sub being lossy costs at most a poll interval, because
// readers also look again every `pollMs`. A wait for the end of a run (`untilEnded`) reads the
// stream's last entry once, then ends when an end or discard entry is announced (or reads it
// again after `pollMs`): the events in between cost it no reads.
//
// Appends are buffered in this process, per run and in order, and written in batches; while Redis
// is unreachable they stay buffered (bounded by `maxEvents` per run, oldest events dropped first)
// and are written when the connection returns, so runs go on executing. A batch cut off by a lost
// connection is resent; the writer counter makes the resend skip what had already been appended.

import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerUnavailableError } from './broker.ts';
import type { EventBroker, FirstEvent, OpenOptions, StreamEvent } from './broker.ts';
import type { RedisBus } from './redis.ts';

const APPEND_SCRIPT = `
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
local seq = 0
local topKind = false
if top then
  local writer, count = false, -1
  local fields = top[2]
  for i = 1, #fields, 2 do
    local name = fields[i]
    if name == 'w' then writer = fields[i + 1]
    elseif name == 'n' then count = tonumber(fields[i + 1])
    elseif name == 'k' then topKind = fields[i + 1] end
  end
  if writer == ARGV[1] and count >= tonumber(ARGV[2]) then return top[1] end
  seq = tonumber(string.match(top[1], '^%d+')) + 1
end
local kind = ARGV[3]
if kind == 'create' then
  if topKind == 'end' or topKind == 'discard' then return false end
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[7])
  return false
elseif kind == 'open' then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[7])
  if topKind ~= 'end' then return false end
elseif kind == 'first' then
  if top then return false end
  kind = 'ev'
elseif kind == 'end' and (topKind == 'end' or topKind == 'discard') then
  return false
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[6], seq .. '-1',
  'k', kind, 'e', ARGV[4], 'd', ARGV[5], 'w', ARGV[1], 'n', ARGV[2])
if kind == 'ev' or kind == 'open' then
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[8])
  redis.call('DEL', KEYS[2])
  if kind == 'discard' then redis.call('SET', KEYS[3], '1', 'PX', ARGV[8]) end
end
redis.call('PUBLISH', ARGV[9], id .. ' ' .. kind)
return id
`;

type AppendArgs = (string | number)[];
type WithAppend<T> = T & { tpAgentAppend(...args: AppendArgs): T extends Redis ? Promise<string | null> : T };

// `open` marks the log live and, on an ended log, appends an `open` entry (a new attempt);
// `create` only marks a log live that has not ended (see `OpenOptions.reopen`).
type Kind = 'ev' | 'end' | 'discard' | 'open' | 'create' | 'first';

interface PendingWrite {
  readonly kind: Kind;
  readonly event: string;
  readonly data: string;
  /** This writer's counter, for skipping a resent append. */
  readonly count: number;
}

interface WriteQueue {
  items: PendingWrite[];
  /** Items at the head being written now (never dropped). */
  sending: number;
}

type Entry = [id: string, fields: string[]];

export interface RedisBrokerOptions {
  /** Events kept per run (`MAXLEN ~`), and per run in the local buffer while Redis is down. */
  readonly maxEvents: number;
  /** Called with the number of events dropped from the local buffer of a run. */
  readonly onDrop?: (runId: string, count: number) => void;
  readonly logger: Logger;
  /** A run's log expires this long after its last event while live (default a day). */
  readonly liveTtlMs?: number;
  /** ... and this long after it ended (default an hour). */
  readonly endedTtlMs?: number;
  /** Readers look again this often even without a notification (default 1 s). */
  readonly pollMs?: number;
  /** How long a read waits for a lost connection before failing (default 5 s). */
  readonly graceMs?: number;
}

const BATCH = 64;
const PAGE = 512;

function fieldsOf(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let index = 0; index + 1 < fields.length; index += 2) out[fields[index]] = fields[index + 1];
  return out;
}

/**
 * Whether a run's stream is complete, judged by its last entry and its open marker: it ended or
 * was discarded, or it holds nothing and no one opened it (it never existed, or it expired).
 */
function isComplete(top: Entry | undefined, open: boolean): boolean {
  if (!top) return !open;
  const kind = fieldsOf(top[1]).k;
  return kind === 'end' || kind === 'discard';
}

function positionOf(id: string): number {
  return Number.parseInt(id, 10);
}

export class RedisStreamBroker implements EventBroker {
  private readonly queues = new Map<string, WriteQueue>();
  private readonly flushing = new Map<string, Promise<void>>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly discarded = new Set<string>();
  private readonly liveTtlMs: number;
  private readonly endedTtlMs: number;
  private readonly pollMs: number;
  private readonly graceMs: number;
  private counter = 0;
  private stopped = false;
  private closing = false;
  private lastWriteError = 0;

  constructor(
    private readonly bus: RedisBus,
    private readonly options: RedisBrokerOptions,
  ) {
    this.liveTtlMs = options.liveTtlMs ?? 86_400_000;
    this.endedTtlMs = options.endedTtlMs ?? 3_600_000;
    this.pollMs = options.pollMs ?? 1000;
    this.graceMs = options.graceMs ?? 5000;
    bus.command.defineCommand('tpAgentAppend', { numberOfKeys: 3, lua: APPEND_SCRIPT });
  }

  private key(runId: string, suffix: string): string {
    return `${this.bus.prefix}run:{${runId}}:${suffix}`;
  }

  private channel(runId: string): string {
    return `${this.bus.prefix}run:${runId}`;
  }

  available(): boolean {
    return this.bus.ready();
  }

  private threadChannel(threadId: string): string {
    return `${this.bus.prefix}thread:${threadId}:runs`;
  }

  announce(threadId: string, runId: string): void {
    // Lost while Redis is down: thread streams look at the thread's runs now and then anyway.
    if (this.bus.ready()) this.bus.command.publish(this.threadChannel(threadId), runId).catch(() => undefined);
  }

  watchThread(threadId: string, listener: (runId: string) => void): Promise<() => void> {
    return this.bus.listen(this.threadChannel(threadId), listener);
  }

  open(runId: string, first?: FirstEvent, options?: OpenOptions): void {
    this.enqueue(runId, options?.reopen ? 'open' : 'create', '', null);
    if (first) this.enqueue(runId, 'first', first.event, first.data);
  }

  publish(runId: string, event: string, data: unknown): void {
    this.enqueue(runId, 'ev', event, data);
  }

  finish(runId: string): void {
    this.enqueue(runId, 'end', '', null);
  }

  discard(runId: string): void {
    this.discarded.add(runId);
    if (this.discarded.size > 1000) this.discarded.delete(this.discarded.values().next().value!);
    this.enqueue(runId, 'discard', '', null);
  }

  finishAll(): void {
    this.stopped = true;
    for (const set of this.wakers.values()) for (const wake of [...set]) wake();
  }

  async wasDiscarded(runId: string): Promise<boolean> {
    if (this.discarded.has(runId)) return true;
    try {
      return (await this.call(() => this.bus.command.exists(this.key(runId, 'discarded')))) > 0;
    } catch {
      return false;
    }
  }

  async last(runId: string, event: string): Promise<StreamEvent | undefined> {
    const key = this.key(runId, 'events');
    let end = '+';
    for (;;) {
      const entries = (await this.call(() => this.bus.command.xrevrange(key, end, '-', 'COUNT', PAGE))) as Entry[];
      for (const [id, raw] of entries) {
        const fields = fieldsOf(raw);
        if (fields.k === 'ev' && fields.e === event)
          return { id: positionOf(id), event, data: JSON.parse(fields.d ?? 'null') as unknown };
      }
      if (entries.length < PAGE) return undefined;
      end = `(${entries[entries.length - 1][0]}`;
    }
  }

  async *subscribe(runId: string, afterId: number, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    if (this.stopped || signal?.aborted) return;
    if (!this.available())
      throw new BrokerUnavailableError('The run event broker (Redis) is unreachable; retry shortly.');
    const key = this.key(runId, 'events');
    const unlisten = await this.bus.listen(this.channel(runId), () => this.wake(runId));
    try {
      // What this process has appended itself (say, `open` right before a client follows the run)
      // is in Redis before the first read.
      await this.drained(runId, this.graceMs);
      let cursor = afterId;
      for (;;) {
        if (signal?.aborted || this.stopped) return;
        let woken = false;
        let resolveWake: (() => void) | undefined;
        const removeWaker = this.addWaker(runId, () => {
          woken = true;
          resolveWake?.();
        });
        try {
          const start = cursor < 0 ? '-' : `(${cursor}-1`;
          const entries = (await this.call(() => this.bus.command.xrange(key, start, '+', 'COUNT', PAGE))) as Entry[];
          if (entries.length > 0) {
            for (const [id, raw] of entries) {
              cursor = positionOf(id);
              const fields = fieldsOf(raw);
              if (fields.k === 'discard') return;
              if (fields.k !== 'ev') continue;
              yield { id: cursor, event: fields.e ?? '', data: JSON.parse(fields.d ?? 'null') as unknown };
              if (signal?.aborted || this.stopped) return;
            }
            continue;
          }
          // Nothing after the cursor: the stream is complete if it ended (or never existed). The last
          // entry and the open marker are read in one transaction, and an entry past the cursor is
          // read first: between the empty read above and this check, another instance may have
          // appended the run's last events and its end marker (which also deletes the open marker).
          const [top, open] = await this.call(() => this.topAndOpen(runId));
          if (top && positionOf(top[0]) > cursor) continue;
          if (isComplete(top, open)) return;
          if (!woken) await this.pause(signal, (wake) => (resolveWake = wake));
        } finally {
          removeWaker();
        }
      }
    } finally {
      unlisten();
    }
  }

  async untilEnded(runId: string, signal?: AbortSignal): Promise<void> {
    if (this.stopped || signal?.aborted) return;
    if (!this.available())
      throw new BrokerUnavailableError('The run event broker (Redis) is unreachable; retry shortly.');
    // Whether the last entry is worth reading: at first, after an announcement without its kind,
    // and after `pollMs` without one (announcements are lossy). An announced end or discard is
    // taken at its word: the append script publishes it once the entry is in the stream.
    let look = true;
    let announcedEnd = false;
    let wakeUp: (() => void) | undefined;
    const unlisten = await this.bus.listen(this.channel(runId), (message) => {
      const kind = message.split(' ')[1];
      if (kind === 'end' || kind === 'discard') announcedEnd = true;
      else if (kind === undefined) look = true;
      else return;
      wakeUp?.();
    });
    // `finishAll` (the server stops) ends the wait.
    const removeWaker = this.addWaker(runId, () => wakeUp?.());
    try {
      // What this process has appended itself (say, the end of a run it executed) is in Redis first.
      await this.drained(runId, this.graceMs);
      for (;;) {
        if (signal?.aborted || this.stopped || announcedEnd) return;
        if (look) {
          look = false;
          const [top, open] = await this.call(() => this.topAndOpen(runId));
          if (isComplete(top, open)) return;
          if (look || announcedEnd) continue;
        }
        // Nothing heard for `pollMs`: announcements are lossy, so look at the last entry again.
        if (await this.pause(signal, (wake) => (wakeUp = wake))) look = true;
      }
    } finally {
      removeWaker();
      unlisten();
    }
  }

  /**
   * Registers `wake`, called when the run is announced on this instance (`wake`) or the broker
   * finishes every reader (`finishAll`); returns the function that removes it again.
   */
  private addWaker(runId: string, wake: () => void): () => void {
    let set = this.wakers.get(runId);
    if (!set) this.wakers.set(runId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.wakers.get(runId) === set) this.wakers.delete(runId);
    };
  }

  /**
   * Waits until the function handed to `onWake` is called, `pollMs` passes or `signal` aborts,
   * whichever comes first (`onWake` gets undefined again once the wait is over). Resolves to true
   * when `pollMs` passed: nothing woke the reader, so it should look for itself.
   */
  private pause(signal: AbortSignal | undefined, onWake: (wake: (() => void) | undefined) => void): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (timedOut: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', woken);
        onWake(undefined);
        resolve(timedOut);
      };
      const woken = () => done(false);
      const timer = setTimeout(() => done(true), this.pollMs);
      signal?.addEventListener('abort', woken, { once: true });
      onWake(woken);
    });
  }

  /** The stream's last entry and whether the run is marked open, as one atomic snapshot. */
  private async topAndOpen(runId: string): Promise<[Entry | undefined, boolean]> {
    const results = await this.bus.command
      .multi()
      .xrevrange(this.key(runId, 'events'), '+', '-', 'COUNT', 1)
      .exists(this.key(runId, 'open'))
      .exec();
    if (!results) throw new BrokerUnavailableError('The run event broker (Redis) aborted a read; retry shortly.');
    for (const [error] of results) if (error) throw error;
    const [[, entries], [, open]] = results as [[null, Entry[]], [null, number]];
    return [entries[0], open > 0];
  }

  /** Waits (until `deadline`) for buffered appends to be written, then stops writing. */
  async close(deadline = Date.now() + 2000): Promise<void> {
    const pending = Promise.all([...this.flushing.values()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      pending,
      new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    this.closing = true;
    const left = [...this.queues.values()].reduce((sum, queue) => sum + queue.items.length, 0);
    if (left > 0)
      this.options.logger.warn({ events: left }, 'Stopped with run events not yet written to Redis; they are lost.');
  }

  // --- writing ---------------------------------------------------------------------------------

  private enqueue(runId: string, kind: Kind, event: string, data: unknown): void {
    let queue = this.queues.get(runId);
    if (!queue) this.queues.set(runId, (queue = { items: [], sending: 0 }));
    queue.items.push({ kind, event, data: JSON.stringify(data === undefined ? null : data), count: this.counter++ });
    if (queue.items.length > this.options.maxEvents) {
      const index = queue.items.findIndex((item, position) => position >= queue.sending && item.kind === 'ev');
      if (index >= 0) {
        queue.items.splice(index, 1);
        this.options.onDrop?.(runId, 1);
      }
    }
    if (!this.flushing.has(runId)) {
      const flushing = this.flush(runId, queue).finally(() => {
        this.flushing.delete(runId);
        if (queue.items.length === 0 && this.queues.get(runId) === queue) this.queues.delete(runId);
      });
      this.flushing.set(runId, flushing);
    }
  }

  private async flush(runId: string, queue: WriteQueue): Promise<void> {
    const command = this.bus.command as WithAppend<Redis>;
    const keys = [this.key(runId, 'events'), this.key(runId, 'open'), this.key(runId, 'discarded')];
    while (queue.items.length > 0 && !this.closing) {
      if (command.status !== 'ready') {
        if (!(await this.bus.whenReady(this.pollMs)) && this.bus.isClosed) return;
        continue;
      }
      const batch = queue.items.slice(0, BATCH);
      queue.sending = batch.length;
      const pipeline = command.pipeline() as WithAppend<ChainableCommander>;
      for (const item of batch) {
        pipeline.tpAgentAppend(
          ...keys,
          this.bus.instanceId,
          item.count,
          item.kind,
          item.event,
          item.data,
          this.options.maxEvents,
          this.liveTtlMs,
          this.endedTtlMs,
          this.channel(runId),
        );
      }
      let results: [Error | null, unknown][] | null = null;
      try {
        results = await pipeline.exec();
      } catch (error) {
        this.writeFailed(runId, error);
      }
      let done = 0;
      for (const [error] of results ?? []) {
        if (error && error.name !== 'ReplyError') break;
        // Redis refused the append itself (not the connection): retrying would not help.
        if (error) this.writeFailed(runId, error);
        done++;
      }
      queue.items.splice(0, done);
      queue.sending = 0;
      if (done > 0) this.wake(runId);
      else if (results) await this.bus.whenReady(this.pollMs);
    }
  }

  private writeFailed(runId: string, error: unknown): void {
    if (Date.now() - this.lastWriteError < 60_000) return;
    this.lastWriteError = Date.now();
    this.options.logger.warn(
      { run_id: runId, err: error },
      'Could not write run events to Redis; they stay buffered and are retried.',
    );
  }

  private async drained(runId: string, timeoutMs: number): Promise<void> {
    const flushing = this.flushing.get(runId);
    if (!flushing) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([flushing, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  // --- reading ---------------------------------------------------------------------------------

  /** Runs a read, failing with `BrokerUnavailableError` when Redis stays unreachable past the grace. */
  private async call<T>(read: () => Promise<T>): Promise<T> {
    if (this.bus.command.status !== 'ready' && !(await this.bus.whenReady(this.graceMs)))
      throw new BrokerUnavailableError('Lost the connection to the run event broker (Redis); retry shortly.');
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new BrokerUnavailableError('The run event broker (Redis) did not answer; retry shortly.')),
            this.graceMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private wake(runId: string): void {
    for (const wake of [...(this.wakers.get(runId) ?? [])]) wake();
  }
}

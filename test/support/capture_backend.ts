// A tracing backend for fault tests and benchmarks: a real HTTP server on a loopback port that
// accepts the backend exporter's uploads (`POST /runs/multipart`, a zstd-compressed multipart
// body, parsed strictly with the exporter's own reader) and records the id of every run it takes,
// counting distinct ids and duplicates. A `patch.<id>` part (a run's update: end time, outputs,
// error) is counted apart and, with `keepRuns`, folded into the run it names, as the tracing
// backend does: a run posted and later patched is one run. How it answers is a mode switched at run time:
//
//   ok                 2xx at once
//   slow(ms)           2xx after `ms`
//   hung               never answers (the connection stays open until the client gives up)
//   throttle(s, ra, n) `s` (429) with `Retry-After: ra` for the next `n` uploads, then ok
//   error(s)           `s` (5xx) to every upload
//   down               the listener is closed (connections are refused); leaving `down` listens
//                      again on the SAME port, so a client configured with the first address recovers
//
// When is a run "delivered"? When the backend decides to answer 2xx for its upload: at once in
// `ok`, after the delay in `slow` — whether or not the client is still waiting then, as a real
// backend that stored the data before answering would (an upload the client gave up on and sends
// again therefore shows up as a duplicate, as it would in production). Uploads answered with
// anything else, or never answered, deliver nothing.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { decompress } from 'zstd-napi';
import {
  boundaryOf,
  parseMultipart,
  runsFromParts,
} from '../../plugins/exporters/backend/internal/multipart_reader.ts';
import type { Run } from '../../src/model/runs.ts';
import { eventually } from '../../src/testkit/eventually.ts';

export type BackendMode =
  | { readonly kind: 'ok'; readonly status: number }
  | { readonly kind: 'slow'; readonly ms: number }
  | { readonly kind: 'hung' }
  | { readonly kind: 'throttle'; readonly status: number; readonly retryAfterS: number; readonly times: number }
  | { readonly kind: 'error'; readonly status: number }
  | { readonly kind: 'down' };

/** Mode constructors: `backend.set(mode.slow(2000))`. */
export const mode = {
  ok: (status = 202): BackendMode => ({ kind: 'ok', status }),
  slow: (ms: number): BackendMode => ({ kind: 'slow', ms }),
  hung: (): BackendMode => ({ kind: 'hung' }),
  throttle: (status = 429, retryAfterS = 3600, times = 1): BackendMode => ({
    kind: 'throttle',
    status,
    retryAfterS,
    times,
  }),
  error: (status = 503): BackendMode => ({ kind: 'error', status }),
  down: (): BackendMode => ({ kind: 'down' }),
};

export function describeMode(m: BackendMode): string {
  switch (m.kind) {
    case 'ok':
      return `ok(${m.status})`;
    case 'slow':
      return `slow(${m.ms} ms)`;
    case 'hung':
      return 'hung';
    case 'throttle':
      return `throttle(${m.status}, Retry-After ${m.retryAfterS} s, ${m.times}x)`;
    case 'error':
      return `error(${m.status})`;
    case 'down':
      return 'down';
  }
}

/** What a run said about its place in its trace, and who uploaded it (with `keepRunDetails`). */
export interface RunDetail {
  readonly traceId?: string;
  readonly parentRunId?: string;
  readonly dottedOrder?: string;
  /** `session_name`: the project. */
  readonly project?: string;
  /** The upload's `X-API-Key`. */
  readonly apiKey?: string;
}

interface RunRecord {
  /** Times the run was delivered (answered 2xx). */
  count: number;
  /** When it was first delivered (Date.now()). */
  firstAt: number;
}

export class CaptureBackend {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  /** Requests held open by `hung`: answered with nothing, destroyed on close. */
  private readonly held = new Set<ServerResponse>();
  private current: BackendMode = mode.ok();
  private throttledLeft = 0;
  private boundPort = 0;

  /** Delivered runs by id. */
  readonly runs = new Map<string, RunRecord>();
  /** Runs delivered in total, duplicates included. */
  deliveredTotal = 0;
  /** Runs that arrived in any upload, whatever the answer (the same run counts each time). */
  receivedTotal = 0;
  /** Uploads by the status answered ('none' for hung, 'gone' when the client left before a delayed 2xx). */
  readonly answers = new Map<string, number>();
  /** Uploads whose body could not be read: any entry is a bug in the exporter. */
  readonly malformed: string[] = [];
  /** Uploads seen (parsed or not). */
  uploads = 0;
  /** When the last run never delivered before was delivered. */
  lastNewAt = 0;
  /** Keep each delivered run's trace fields and tenant in `details` (tests of routing; costs a parse). */
  keepRunDetails = false;
  /** By run id, the last delivery's details (filled only with `keepRunDetails`). */
  readonly details = new Map<string, RunDetail>();
  /** Updates (`patch.<id>` parts) delivered, by run id. */
  readonly patches = new Map<string, number>();
  /** Keep every delivered run in `stored`, its updates folded in (tests of content; costs a parse). */
  keepRuns = false;
  /** By run id, the run as the backend holds it: the post with every later patch merged over it. */
  readonly stored = new Map<string, Run>();

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  get mode(): BackendMode {
    return this.current;
  }

  /** Distinct runs delivered. */
  get distinct(): number {
    return this.runs.size;
  }

  /** Deliveries beyond the first of a run. */
  get duplicates(): number {
    return this.deliveredTotal - this.runs.size;
  }

  /** Listens on 127.0.0.1, port 0 the first time; returns the base URL to configure as the endpoint. */
  async start(initial: BackendMode = mode.ok()): Promise<string> {
    this.current = initial;
    if (initial.kind === 'throttle') this.throttledLeft = initial.times;
    if (initial.kind !== 'down') await this.listen();
    else {
      // A backend that is down from the start still needs a port that nobody else listens on:
      // bind one, remember it, and close it again.
      await this.listen();
      await this.closeListener();
    }
    return this.url;
  }

  /** Switches the mode; leaving `down` listens again on the same port, entering it closes the listener. */
  async set(next: BackendMode): Promise<void> {
    const previous = this.current;
    this.current = next;
    if (next.kind === 'throttle') this.throttledLeft = next.times;
    if (next.kind === 'down' && previous.kind !== 'down') await this.closeListener();
    if (next.kind !== 'down' && previous.kind === 'down') await this.listen();
  }

  /** Closes the listener and every connection (for good). */
  async close(): Promise<void> {
    this.current = mode.down();
    await this.closeListener();
  }

  has(id: string): boolean {
    return this.runs.has(id);
  }

  /** The ids of `ids` not delivered (yet). */
  missing(ids: Iterable<string>): string[] {
    const out: string[] = [];
    for (const id of ids) if (!this.runs.has(id)) out.push(id);
    return out;
  }

  /** Deliveries beyond the first, among `ids`. */
  duplicatesAmong(ids: Iterable<string>): number {
    let extra = 0;
    for (const id of ids) {
      const record = this.runs.get(id);
      if (record && record.count > 1) extra += record.count - 1;
    }
    return extra;
  }

  /** The latest first delivery among `ids` (Date.now() units), or undefined if one is missing. */
  lastFirstDelivery(ids: Iterable<string>): number | undefined {
    let last = 0;
    for (const id of ids) {
      const record = this.runs.get(id);
      if (!record) return undefined;
      last = Math.max(last, record.firstAt);
    }
    return last;
  }

  /** Resolves once every id of `ids` was delivered; rejects after `timeoutMs` saying how many are missing. */
  async waitForAll(ids: ReadonlySet<string> | readonly string[], timeoutMs: number): Promise<void> {
    const list = [...ids];
    let pending = list;
    await eventually(
      () => {
        pending = pending.filter((id) => !this.runs.has(id));
        return pending.length === 0;
      },
      { timeoutMs, message: () => `${pending.length} of ${list.length} runs at the capture backend` },
    );
  }

  /** A one-line account, for failure messages and logs. */
  summary(): string {
    const answers = [...this.answers].map(([status, count]) => `${status}×${count}`).join(' ');
    return `mode ${describeMode(this.current)}; ${this.uploads} uploads (${answers || 'none'}); ${this.distinct} distinct runs delivered, ${this.duplicates} duplicates, ${this.malformed.length} malformed`;
  }

  private count(status: string): void {
    this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
  }

  private async listen(): Promise<void> {
    const server = createServer((request, response) => this.handle(request, response));
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // Reopening the port of a closed listener: another process could have taken it meanwhile
    // (unlikely on loopback); retry a little before giving up.
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(this.boundPort, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || this.boundPort === 0 || attempt >= 50)
          throw error;
        await sleep(100);
      }
    }
    this.boundPort = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async closeListener(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const response of this.held) response.destroy();
    this.held.clear();
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', () => undefined);
    request.on('end', () => {
      void this.answer(request, response, Buffer.concat(chunks)).catch((error: unknown) => {
        this.malformed.push(`handler failed: ${String(error)}`);
        if (!response.headersSent && !response.destroyed) response.writeHead(500).end();
      });
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse, body: Buffer): Promise<void> {
    this.uploads++;
    if (request.method !== 'POST' || !(request.url ?? '').startsWith('/runs/multipart')) {
      this.count('404');
      response.writeHead(404).end('not found');
      return;
    }
    let ids: string[];
    let patched: string[];
    try {
      ids = runIdsOf(request.headers['content-encoding'], request.headers['content-type'], body);
      patched = patchIdsOf(request.headers['content-type'], body);
    } catch (error) {
      this.malformed.push(String(error));
      this.count('400');
      response.writeHead(400).end(String(error));
      return;
    }
    this.receivedTotal += ids.length;
    const m = this.current;
    switch (m.kind) {
      case 'hung':
        this.count('none');
        this.held.add(response);
        response.once('close', () => this.held.delete(response));
        return;
      case 'error':
        this.count(String(m.status));
        response
          .writeHead(m.status, { 'content-type': 'application/json' })
          .end('{"detail":"backend error (capture backend)"}');
        return;
      case 'throttle':
        if (this.throttledLeft > 0) {
          this.throttledLeft--;
          if (this.throttledLeft === 0) this.current = mode.ok();
          this.count(String(m.status));
          response
            .writeHead(m.status, { 'retry-after': String(m.retryAfterS), 'content-type': 'application/json' })
            .end('{"detail":"slow down"}');
          return;
        }
        this.current = mode.ok();
        break;
      case 'slow':
        await sleep(m.ms);
        break;
      case 'down':
        // A request that got in just before the listener closed: its connection is being destroyed.
        response.destroy();
        return;
      case 'ok':
        break;
    }
    // Delivered: the backend stored the runs and answers 2xx (the client may have gone meanwhile).
    this.deliver(ids);
    for (const id of patched) this.patches.set(id, (this.patches.get(id) ?? 0) + 1);
    if (this.keepRuns) this.store(request.headers['content-type'], body);
    if (this.keepRunDetails) {
      const apiKey = request.headers['x-api-key'];
      for (const [id, detail] of runDetailsOf(request.headers['content-type'], body))
        this.details.set(id, { ...detail, ...(typeof apiKey === 'string' ? { apiKey } : {}) });
    }
    const status = this.current.kind === 'ok' ? this.current.status : 202;
    if (response.destroyed || request.socket.destroyed) {
      this.count('gone');
      return;
    }
    this.count(String(status));
    response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }

  /** Folds an upload's runs into `stored`: a post sets the run, a patch merges its fields over it. */
  private store(contentType: string | undefined, compressed: Buffer): void {
    for (const run of runsFromParts(parseMultipart(decompress(compressed), boundaryOf(contentType)))) {
      const { update, ...fields } = run;
      const held = this.stored.get(run.id);
      // A patch that overtook its post keeps its fields: the post only fills what it lacks.
      this.stored.set(run.id, update || !held ? { ...held, ...fields } : { ...fields, ...held });
    }
  }

  private deliver(ids: readonly string[]): void {
    const now = Date.now();
    for (const id of ids) {
      this.deliveredTotal++;
      const record = this.runs.get(id);
      if (record) record.count++;
      else {
        this.runs.set(id, { count: 1, firstAt: now });
        this.lastNewAt = now;
      }
    }
  }
}

const RUN_PART = /^post\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const PATCH_PART = /^patch\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const FIELD_PART = /^(post|patch)\.[0-9a-f-]{36}\.(inputs|outputs)$/;

/** Each run's trace fields, by run id, from an upload body already checked by `runIdsOf`. */
function runDetailsOf(contentType: string | undefined, compressed: Buffer): Map<string, RunDetail> {
  const details = new Map<string, RunDetail>();
  for (const part of parseMultipart(decompress(compressed), boundaryOf(contentType))) {
    const run = RUN_PART.exec(part.name);
    if (!run) continue;
    const json = JSON.parse(part.body.toString('utf8')) as Record<string, unknown>;
    const text = (key: string) => (typeof json[key] === 'string' ? { [key]: json[key] } : {});
    const { trace_id, parent_run_id, dotted_order, session_name } = {
      ...text('trace_id'),
      ...text('parent_run_id'),
      ...text('dotted_order'),
      ...text('session_name'),
    } as Record<string, string | undefined>;
    details.set(run[1]!, {
      ...(trace_id ? { traceId: trace_id } : {}),
      ...(parent_run_id ? { parentRunId: parent_run_id } : {}),
      ...(dotted_order ? { dottedOrder: dotted_order } : {}),
      ...(session_name ? { project: session_name } : {}),
    });
  }
  return details;
}

/** The run ids of an upload body (zstd, multipart), checked strictly; throws on anything malformed. */
export function runIdsOf(
  contentEncoding: string | string[] | undefined,
  contentType: string | undefined,
  compressed: Buffer,
): string[] {
  if (contentEncoding !== 'zstd') throw new Error(`body is not zstd (Content-Encoding ${String(contentEncoding)})`);
  const parts = parseMultipart(decompress(compressed), boundaryOf(contentType));
  const ids: string[] = [];
  for (const part of parts) {
    const run = RUN_PART.exec(part.name);
    if (run) ids.push(run[1]!);
    else if (!PATCH_PART.test(part.name) && !FIELD_PART.test(part.name))
      throw new Error(`unexpected part ${part.name}`);
  }
  return ids;
}

/** The ids of the runs an upload body (already checked by `runIdsOf`) updates. */
function patchIdsOf(contentType: string | undefined, compressed: Buffer): string[] {
  const ids: string[] = [];
  for (const part of parseMultipart(decompress(compressed), boundaryOf(contentType))) {
    const patch = PATCH_PART.exec(part.name);
    if (patch) ids.push(patch[1]!);
  }
  return ids;
}

// A load sender for fault tests and benchmarks: OTLP/HTTP requests (protobuf or JSON) of N GenAI
// spans each, sent with bounded concurrency, a bounded number of requests and a bounded time. It
// records, request by request, which were acknowledged (2xx) and which were refused (429/503:
// the client's to retry, not acknowledged) or failed (other statuses, connection errors,
// timeouts) — and so which run ids the proxy promised to deliver.
//
// Every span is the root of its own trace, so the run id the backend sees is the UUID text of
// the span's trace id (see plugins/processors/genai/internal/ids.ts), known before sending.

import { randomBytes } from 'node:crypto';
import type { Span } from '../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { intAttr, makeBatch, plainSpan, stringAttr } from '../../src/testkit/spans.ts';
import { eventually } from '../../src/testkit/eventually.ts';

/** The run id the `genai` processor gives a root span: its 32-hex-digit trace id as a UUID. */
export function runIdOfTrace(traceId: string): string {
  return `${traceId.slice(0, 8)}-${traceId.slice(8, 12)}-${traceId.slice(12, 16)}-${traceId.slice(16, 20)}-${traceId.slice(20, 32)}`;
}

export interface OtlpRequest {
  readonly body: Uint8Array | string;
  readonly contentType: string;
  /** Run ids the backend will see for this request's spans. */
  readonly runIds: readonly string[];
}

/**
 * One request of `spans` root GenAI spans (an LLM call each), with about `textBytes` of prompt and
 * completion; `entropyBytes` of random data (base64) in each prompt make the uploads compress
 * like real text rather than 20:1 (so that a disk queue fills as it would in production).
 */
export function genAiRequest(
  spans: number,
  encoding: 'protobuf' | 'json' = 'protobuf',
  sequence = 0,
  textBytes = 400,
  entropyBytes = 0,
): OtlpRequest {
  const list: Span[] = [];
  const runIds: string[] = [];
  const start = BigInt(Date.now()) * 1_000_000n;
  const half = Math.max(0, Math.floor(textBytes / 2));
  const filler = 'The quarterly report shows steady growth in every region. '
    .repeat(Math.ceil(half / 58) + 1)
    .slice(0, half);
  for (let i = 0; i < spans; i++) {
    const traceId = randomBytes(16).toString('hex');
    runIds.push(runIdOfTrace(traceId));
    list.push(
      plainSpan({
        traceId,
        spanId: randomBytes(8).toString('hex'),
        flags: 1,
        name: 'chat gpt-4o-mini',
        kind: 3,
        startTimeUnixNano: start + BigInt(i) * 1000n,
        endTimeUnixNano: start + BigInt(i) * 1000n + 900_000_000n,
        attributes: [
          stringAttr('gen_ai.system', 'openai'),
          stringAttr('gen_ai.operation.name', 'chat'),
          stringAttr('gen_ai.request.model', 'gpt-4o-mini'),
          stringAttr(
            'gen_ai.prompt',
            JSON.stringify([
              {
                role: 'user',
                content: `Request ${sequence}-${i}: ${filler}${entropyBytes > 0 ? ` ${randomBytes(entropyBytes).toString('base64')}` : ''}`,
              },
            ]),
          ),
          stringAttr('gen_ai.completion', JSON.stringify([{ role: 'assistant', content: filler }])),
          intAttr('gen_ai.usage.input_tokens', 42),
          intAttr('gen_ai.usage.output_tokens', 31),
        ],
      }),
    );
  }
  const batch = makeBatch(list, {
    resource: [stringAttr('service.name', 'fault-test')],
    scope: { name: 'faults', version: '1.0.0' },
  });
  return encoding === 'json'
    ? { body: JSON.stringify(encodeTraceRequestJson(batch)), contentType: 'application/json', runIds }
    : { body: encodeTraceRequestProtobuf(batch), contentType: 'application/x-protobuf', runIds };
}

export interface LoadOptions {
  /** The OTLP traces URL, e.g. http://127.0.0.1:4318/v1/traces. */
  readonly url: string;
  readonly spansPerRequest?: number;
  /** Stop after this many requests (each sent once). */
  readonly maxRequests: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
  /** Stop starting requests after this long. */
  readonly maxDurationMs?: number;
  /** Give up on one request after this long (counted as failed). */
  readonly requestTimeoutMs?: number;
  readonly encoding?: 'protobuf' | 'json';
  readonly headers?: Record<string, string>;
  /** Bytes of prompt and completion text per span. */
  readonly textBytes?: number;
  /** Random bytes per span (see genAiRequest). */
  readonly entropyBytes?: number;
  /**
   * Send a refused request (429/503) again after this many ms, until it is acknowledged, fails,
   * or the sender's time is up — a client that retries (faster than the Retry-After it was
   * given, to keep tests short; the header is still recorded). Each attempt is one record.
   */
  readonly retryRefusedAfterMs?: number;
}

export type Outcome = 'acked' | 'refused' | 'failed';

export interface RequestRecord {
  readonly index: number;
  readonly spans: number;
  readonly outcome: Outcome;
  readonly status?: number;
  readonly retryAfter?: string;
  readonly error?: string;
  readonly runIds: readonly string[];
}

export interface LoadSummary {
  readonly requests: number;
  readonly ackedRequests: number;
  readonly ackedSpans: number;
  readonly refusedRequests: number;
  readonly refusedSpans: number;
  readonly failedRequests: number;
  readonly failedSpans: number;
  /** Refused requests by status. */
  readonly refusedByStatus: Record<string, number>;
  /** Refused requests that came without a Retry-After header. */
  readonly refusedWithoutRetryAfter: number;
  /** Failures by status or error text, for messages. */
  readonly failures: Record<string, number>;
}

export class LoadSender {
  /** Run ids of acknowledged requests: what the proxy promised to deliver. */
  readonly acked = new Set<string>();
  readonly records: RequestRecord[] = [];
  private next = 0;
  private stopped = false;
  private readonly controllers = new Set<AbortController>();
  private startedAt = 0;
  private running?: Promise<LoadSummary>;

  constructor(readonly options: LoadOptions) {}

  /** Starts sending; `done` resolves when the sender stops by itself (count or time) or after stop(). */
  start(): this {
    if (this.running) return this;
    this.startedAt = Date.now();
    const workers = Array.from({ length: this.options.concurrency ?? 4 }, () => this.worker());
    this.running = Promise.all(workers).then(() => this.summary());
    return this;
  }

  get done(): Promise<LoadSummary> {
    if (!this.running) throw new Error('LoadSender.done before start()');
    return this.running;
  }

  /** Starts no new request; with `abort`, also cuts those in flight (they count as failed). */
  stop(abort = false): Promise<LoadSummary> {
    this.stopped = true;
    if (abort) for (const controller of this.controllers) controller.abort(new Error('stopped'));
    return this.running ?? Promise.resolve(this.summary());
  }

  get ackedSpans(): number {
    return this.acked.size;
  }

  /** Resolves once at least `spans` spans were acknowledged; rejects if the sender stops first or after `timeoutMs`. */
  async waitForAcked(spans: number, timeoutMs: number): Promise<void> {
    // Acknowledgements all come before the sender stops: once it has stopped short, waiting is over.
    const stopped = new AbortController();
    void this.running?.then(() => {
      if (this.acked.size < spans)
        stopped.abort(
          new Error(
            `the sender stopped with ${this.acked.size} of ${spans} spans acknowledged: ${JSON.stringify(this.summary())}`,
          ),
        );
    });
    await eventually(() => this.acked.size >= spans, {
      timeoutMs,
      message: () => `${spans} acknowledged spans (have ${this.acked.size}; ${JSON.stringify(this.summary())})`,
      signal: stopped.signal,
    });
  }

  summary(): LoadSummary {
    const sum = (outcome: Outcome) => this.records.filter((r) => r.outcome === outcome);
    const acked = sum('acked');
    const refused = sum('refused');
    const failed = sum('failed');
    const refusedByStatus: Record<string, number> = {};
    for (const r of refused) refusedByStatus[String(r.status)] = (refusedByStatus[String(r.status)] ?? 0) + 1;
    const failures: Record<string, number> = {};
    for (const r of failed) {
      const key = r.status !== undefined ? String(r.status) : (r.error ?? 'error');
      failures[key] = (failures[key] ?? 0) + 1;
    }
    const spans = (list: RequestRecord[]) => list.reduce((total, r) => total + r.spans, 0);
    return {
      requests: this.records.length,
      ackedRequests: acked.length,
      ackedSpans: spans(acked),
      refusedRequests: refused.length,
      refusedSpans: spans(refused),
      failedRequests: failed.length,
      failedSpans: spans(failed),
      refusedByStatus,
      refusedWithoutRetryAfter: refused.filter((r) => !r.retryAfter).length,
      failures,
    };
  }

  private async worker(): Promise<void> {
    const {
      maxRequests,
      maxDurationMs = 60_000,
      spansPerRequest = 100,
      encoding = 'protobuf',
      textBytes,
      entropyBytes,
      retryRefusedAfterMs,
    } = this.options;
    const timeLeft = () => Date.now() - this.startedAt < maxDurationMs;
    while (!this.stopped && this.next < maxRequests && timeLeft()) {
      const index = this.next++;
      const request = genAiRequest(spansPerRequest, encoding, index, textBytes, entropyBytes);
      for (;;) {
        const outcome = await this.sendOne(index, request);
        if (outcome !== 'refused' || retryRefusedAfterMs === undefined || this.stopped) break;
        await new Promise((resolve) => setTimeout(resolve, retryRefusedAfterMs));
        if (!timeLeft()) break;
      }
    }
  }

  private async sendOne(index: number, request: OtlpRequest): Promise<Outcome> {
    const { url, requestTimeoutMs = 30_000, headers = {} } = this.options;
    const controller = new AbortController();
    this.controllers.add(controller);
    const timer = setTimeout(
      () => controller.abort(new Error(`no answer in ${requestTimeoutMs} ms`)),
      requestTimeoutMs,
    );
    const base = { index, spans: request.runIds.length, runIds: request.runIds };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': request.contentType, ...headers },
        body: request.body,
        signal: controller.signal,
      });
      await response.arrayBuffer();
      const retryAfter = response.headers.get('retry-after') ?? undefined;
      if (response.ok) {
        for (const id of request.runIds) this.acked.add(id);
        this.records.push({ ...base, outcome: 'acked', status: response.status });
        return 'acked';
      }
      if (response.status === 429 || response.status === 503) {
        this.records.push({
          ...base,
          outcome: 'refused',
          status: response.status,
          ...(retryAfter !== undefined ? { retryAfter } : {}),
        });
        return 'refused';
      }
      this.records.push({ ...base, outcome: 'failed', status: response.status });
      return 'failed';
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      this.records.push({ ...base, outcome: 'failed', error: cause?.code ?? (error as Error).name ?? 'error' });
      return 'failed';
    } finally {
      clearTimeout(timer);
      this.controllers.delete(controller);
    }
  }
}

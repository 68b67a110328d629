// The OpenTelemetry SDK that graph runs are recorded with: one `BasicTracerProvider` for the
// process, whose sampler and span processor know which traces belong to a run in progress. A run
// registers its trace (the trace id is the run id) when its tracer is created; every span started
// in that trace — the run tracer's own and those graph code opens through `@opentelemetry/api` —
// is then counted against the run's span limit and kept for the run until it is flushed. Spans of
// any other trace are not recorded (they cost no more than the API's no-op spans).
//
// One provider serves every agent server in the process because the OpenTelemetry API has one
// global provider: the runs are told apart by their trace ids, not by provider.

import { trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, RandomIdGenerator, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import type {
  IdGenerator,
  ReadableSpan,
  Sampler,
  SamplingResult,
  Span as SdkSpan,
  SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** What one run has recorded so far, and what it may still record. */
export class RunSpans {
  /** Spans started and not yet ended, in start order. */
  readonly open = new Set<SdkSpan>();
  /** Spans ended and not yet sent, in end order. */
  private finished: ReadableSpan[] = [];
  private recorded = 0;
  private dropped = 0;

  constructor(private readonly maxSpans: number) {}

  /** Counts a new span against the limit: true when it may be recorded, false when it is dropped. */
  admit(): boolean {
    if (this.recorded >= this.maxSpans) {
      this.dropped++;
      return false;
    }
    this.recorded++;
    return true;
  }

  started(span: SdkSpan): void {
    this.open.add(span);
  }

  ended(span: ReadableSpan): void {
    this.open.delete(span as SdkSpan);
    this.finished.push(span);
  }

  /** The spans ended and the count of spans dropped since the last call. */
  take(): { spans: ReadableSpan[]; dropped: number } {
    const taken = { spans: this.finished, dropped: this.dropped };
    this.finished = [];
    this.dropped = 0;
    return taken;
  }
}

/** The runs being recorded, by trace id. */
type RunsByTrace = Map<string, RunSpans>;

/** Records a span only in the trace of a run being recorded, and only within that run's limit. */
class RunSampler implements Sampler {
  constructor(private readonly runs: RunsByTrace) {}

  shouldSample(_context: Context, traceId: string): SamplingResult {
    const run = this.runs.get(traceId);
    return { decision: run?.admit() ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return 'RunSampler';
  }
}

/** Hands each span of a run to that run, which sends them into the pipeline when it is flushed. */
class RunSpanProcessor implements SpanProcessor {
  constructor(private readonly runs: RunsByTrace) {}

  onStart(span: SdkSpan): void {
    this.runs.get(span.spanContext().traceId)?.started(span);
  }

  onEnd(span: ReadableSpan): void {
    this.runs.get(span.spanContext().traceId)?.ended(span);
  }

  async forceFlush(): Promise<void> {
    // Nothing is buffered here: each run flushes its own spans when it ends.
  }

  async shutdown(): Promise<void> {}
}

/**
 * Random ids, except that a run's root span gets the run's trace id (the SDK asks for a trace id
 * only when it starts a root span, synchronously, so the pinned id cannot reach another span).
 */
class RunIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private pinnedTraceId: string | undefined;

  generateTraceId(): string {
    return this.pinnedTraceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }

  withTraceId<T>(traceId: string, start: () => T): T {
    this.pinnedTraceId = traceId;
    try {
      return start();
    } finally {
      this.pinnedTraceId = undefined;
    }
  }
}

export class RunTracing {
  readonly provider: BasicTracerProvider;
  private readonly runs: RunsByTrace = new Map();
  private readonly ids = new RunIdGenerator();

  constructor() {
    this.provider = new BasicTracerProvider({
      sampler: new RunSampler(this.runs),
      idGenerator: this.ids,
      spanProcessors: [new RunSpanProcessor(this.runs)],
    });
  }

  /** Starts recording the spans of trace `traceId`, at most `maxSpans` of them. */
  register(traceId: string, maxSpans: number): RunSpans {
    const run = new RunSpans(maxSpans);
    this.runs.set(traceId, run);
    return run;
  }

  /** Stops recording trace `traceId`: spans started in it from now on are not recorded. */
  unregister(traceId: string): void {
    this.runs.delete(traceId);
  }

  /**
   * Starts a span under `parent`'s span, or — when `parent` holds none — a root span in trace
   * `traceId`. The result does not record (`isRecording()` false) when the run is over its limit.
   */
  startSpan(
    tracer: Tracer,
    traceId: string,
    name: string,
    options: Parameters<Tracer['startSpan']>[1],
    parent: Context,
  ): Span {
    if (trace.getSpan(parent)) return tracer.startSpan(name, options, parent);
    return this.ids.withTraceId(traceId, () => tracer.startSpan(name, options, parent));
  }
}

let shared: RunTracing | undefined;

/** The process's run tracing, created on first use (it holds no timers or sockets). */
export function runTracing(): RunTracing {
  shared ??= new RunTracing();
  return shared;
}

// The `genai` processor: translates each consumed span batch into one run batch (same request
// context) and settles the tree facts that need memory across batches: which span is a trace's
// root (its run takes the trace UUID as id), and which spans the GenAI filter dropped (their
// children move up to the nearest kept ancestor). What the batcher downstream still needs to know
// travels as `RunBatch.hints`.

import type {
  ComponentSettings,
  Consumer,
  Processor,
  RequestContext,
  Run,
  RunBatch,
  SpanBatch,
} from 'tracepipe/plugin';
import { TtlMap, UuidMap } from 'tracepipe/collections';
import type { GenAiProcessorConfig } from './config.ts';
import type { Translated, TranslateOptions } from './translator.ts';
import { InvalidSpanIdError, translateSpan } from './translator.ts';

// A filtered chain longer than this is treated as a cycle (a span can name itself as parent).
const MAX_ANCESTOR_WALK = 1000;
/**
 * How often expired roots are dropped when no data arrives (consume drops them too). Without it,
 * what a burst left stayed until the next request, however long after its TTL that came.
 */
const MAX_SWEEP_INTERVAL_MS = 5000;

export class GenAiProcessor implements Processor<'spans'> {
  readonly mutatesData = false;
  private stopped = false;
  /**
   * Trace UUID → the span UUID of the root that took the trace UUID as its run id (see claimRoot).
   * What a root span's run id is follows from it (rootRunId), so nothing else is remembered per root.
   */
  private readonly traceOwners: UuidMap;
  /** Filtered run id → its parent run id (null for a filtered root). */
  private readonly droppedParents: TtlMap<string, string | null>;
  private readonly filtered;
  private readonly rememberedBytes;
  private readonly translateOptions: TranslateOptions;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: GenAiProcessorConfig,
    private readonly next: Consumer<'runs'>,
  ) {
    const { root_cache_ttl_ms: ttl, root_cache_max_entries: max } = config;
    this.traceOwners = new UuidMap(ttl, max);
    this.droppedParents = new TtlMap(ttl, max);
    this.translateOptions = { genericOtel: config.generic_otel };
    this.filtered = settings.telemetry.meter.counter({
      name: 'tracepipe_genai_spans_filtered_total',
      help: 'Spans the genai processor left out because they carry no GenAI convention (filter_non_genai).',
    });
    this.rememberedBytes = settings.telemetry.meter.gauge({
      name: 'tracepipe_genai_remembered_bytes',
      help: 'Memory of the root spans remembered for later children (root_cache_ttl_ms, root_cache_max_entries).',
    });
  }

  async start(_signal: AbortSignal): Promise<void> {
    const interval = Math.min(MAX_SWEEP_INTERVAL_MS, this.config.root_cache_ttl_ms / 2);
    this.sweepTimer = setInterval(() => this.sweep(), interval);
    this.sweepTimer.unref();
  }

  async consume(batch: SpanBatch, context: RequestContext): Promise<void> {
    if (this.stopped) throw new Error('genai processor is shut down');
    const output = this.translate(batch, context);
    if (output.runs.length === 0 && output.hints === undefined) return;
    await this.next.consume(output, context);
  }

  /** The synchronous part of `consume`, so that batches reach the batcher in arrival order. */
  translate(batch: SpanBatch, context: RequestContext): RunBatch {
    this.sweep();

    const translated: Translated[] = [];
    const options = this.translateOptions;
    let invalid = 0;
    for (const resourceSpans of batch.resourceSpans) {
      for (const scopeSpans of resourceSpans.scopeSpans) {
        for (const span of scopeSpans.spans) {
          try {
            translated.push(translateSpan(span, resourceSpans.resource, scopeSpans.scope, context.project, options));
          } catch (error) {
            if (!(error instanceof InvalidSpanIdError)) throw error;
            invalid++;
          }
        }
      }
    }
    if (invalid > 0) {
      this.settings.telemetry.meter.dropped('spans', 'invalid_id', invalid);
      this.settings.telemetry.logger.warn(
        { spans: invalid, project: context.project },
        'Dropped spans with invalid ids.',
      );
    }

    // Roots first, so that their children in the same batch already point at the root's run id.
    const rootAliases: Record<string, string> = {};
    for (const item of translated) {
      if (!item.isRoot) continue;
      this.claimRoot(item);
      if (item.run.id !== item.spanUuid) rootAliases[item.spanUuid] = item.run.id;
    }

    const droppedRuns: Record<string, string | null> = {};
    const kept: Run[] = [];
    // The spans of a trace come together, so the owner of the trace's UUID is looked up once per
    // trace rather than per child (a lookup parses the UUID and makes the owner's string anew).
    // No root is claimed in this loop, so what was looked up stays true to its end.
    let ownedTrace: string | undefined;
    let owner: string | undefined;
    for (const item of translated) {
      const { run } = item;
      if (run.parent_run_id !== undefined) {
        if (run.trace_id !== ownedTrace) {
          ownedTrace = run.trace_id;
          owner = this.traceOwners.get(ownedTrace);
        }
        // As rootRunId: the trace UUID when the parent is the root that owns the trace.
        if (owner === run.parent_run_id) run.parent_run_id = ownedTrace;
      }
      if (this.config.filter_non_genai && !item.genAi) {
        const parent = run.parent_run_id ?? null;
        for (const id of new Set([run.id, item.spanUuid])) {
          this.droppedParents.set(id, parent);
          droppedRuns[id] = parent;
        }
        continue;
      }
      kept.push(run);
    }
    for (const run of kept) this.reparentAboveDropped(run);

    if (translated.length - kept.length > 0) this.filtered.inc(translated.length - kept.length);
    const hints = {
      ...(Object.keys(rootAliases).length > 0 ? { rootAliases } : {}),
      ...(Object.keys(droppedRuns).length > 0 ? { droppedRuns } : {}),
    };
    return Object.keys(hints).length > 0 ? { runs: kept, hints } : { runs: kept };
  }

  /**
   * A root run takes the trace UUID as its id, so that the trace's id and its root's id agree. When
   * a trace has two root-like spans (an OTel root and a `langsmith.is_root` span below it), the
   * first one seen keeps that id and the other starts a trace of its own, rather than two runs
   * sharing one id.
   */
  private claimRoot(item: Translated): void {
    const { run, spanUuid } = item;
    const owner = this.traceOwners.get(run.trace_id);
    if (owner === undefined || owner === spanUuid) {
      this.traceOwners.set(run.trace_id, spanUuid);
      run.id = run.trace_id;
    } else {
      run.id = spanUuid;
      run.trace_id = spanUuid;
    }
    delete run.parent_run_id;
  }

  /**
   * The run id of the span `spanUuid` of trace `traceId` when it is a root: the trace UUID for the
   * root that owns the trace, the span's own UUID for any other span (other roots included).
   */
  private rootRunId(spanUuid: string, traceId: string): string {
    return this.traceOwners.get(traceId) === spanUuid ? traceId : spanUuid;
  }

  /** Moves a run whose parent was filtered out under its nearest kept ancestor, or makes it a root. */
  private reparentAboveDropped(run: Run): void {
    let parent = run.parent_run_id;
    let moved = false;
    for (let steps = 0; parent !== undefined && steps < MAX_ANCESTOR_WALK; steps++) {
      const above = this.droppedParents.get(parent);
      if (above === undefined) break;
      moved = true;
      parent = above === null ? undefined : this.rootRunId(above, run.trace_id);
    }
    if (!moved) return;
    if (parent === undefined || this.droppedParents.has(parent)) {
      // No kept ancestor: the run starts its own trace.
      delete run.parent_run_id;
      run.trace_id = run.id;
    } else {
      run.parent_run_id = parent;
    }
  }

  /** Nothing is buffered here: shutting down only refuses further data and forgets the caches. */
  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    this.traceOwners.clear();
    this.droppedParents.clear();
    this.rememberedBytes.set(0);
  }

  /** Drops expired entries (cheap: each map stops at its first live one) and reports what is left. */
  private sweep(): void {
    this.traceOwners.sweep();
    this.droppedParents.sweep();
    this.rememberedBytes.set(this.traceOwners.heldBytes);
  }
}

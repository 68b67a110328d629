// The trace query API's request parsing and response bodies: query-string filters checked one by
// one (a bad value names its field), summaries in the API's snake_case with a cost where prices
// are known (and where each price comes from), and a trace's runs with their durations, tokens
// and costs.

import type { Run } from 'tracepipe/plugin';
import type { ListTracesQuery, LocalTraceStore, StoredTrace, ThreadSummary, TraceSummary } from 'tracepipe/tracestore';
import { TRACE_SORT_FIELDS, TRACE_STATUSES, toMicros, usageOf } from 'tracepipe/tracestore';
import type { CostSource, Pricer, Quote } from './pricing.ts';
import { REPORTED, combinedSource, sourceBody } from './pricing.ts';

/** A query parameter with a value the API does not accept. */
export class QueryError extends Error {
  override readonly name = 'QueryError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

const KNOWN = [
  'project',
  'name',
  'status',
  'error',
  'start_after',
  'start_before',
  'tag',
  'metadata',
  'q',
  'model',
  'thread_id',
  'sort',
  'order',
  'limit',
  'cursor',
];

export type RawQuery = Record<string, string | string[] | undefined>;

/**
 * Reads a query string's parameters one by one, each checked as it is read; a parameter outside
 * `known` is refused at once. Every error is a QueryError naming the parameter.
 */
export function queryReader(raw: RawQuery, known: readonly string[]) {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) throw new QueryError(key, `unknown parameter (known: ${known.join(', ')})`);
  }
  /** The parameter's value; undefined when absent or empty. */
  const one = (key: string): string | undefined => {
    const value = raw[key];
    if (Array.isArray(value)) throw new QueryError(key, 'give it once');
    return value === undefined || value === '' ? undefined : value;
  };
  return {
    one,
    /** An RFC 3339 time, in epoch microseconds. */
    time(key: string): number | undefined {
      const value = one(key);
      if (value === undefined) return undefined;
      try {
        return toMicros(value);
      } catch {
        throw new QueryError(key, `not an RFC 3339 time such as 2026-01-01T12:00:00Z: ${JSON.stringify(value)}`);
      }
    },
    oneOf<T extends string>(key: string, allowed: readonly T[]): T | undefined {
      const value = one(key);
      if (value !== undefined && !allowed.includes(value as T)) {
        throw new QueryError(key, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
      }
      return value as T | undefined;
    },
  };
}

/** The store query of `GET /api/traces`'s query string; throws QueryError naming the field. */
export function parseTraceQuery(raw: RawQuery, extra: readonly string[] = []): ListTracesQuery {
  const { one, oneOf, time: micros } = queryReader(raw, [...KNOWN, ...extra]);
  // Times stay RFC 3339 texts in the store's query (checked here, converted there).
  const time = (key: string) => (micros(key) === undefined ? undefined : one(key));
  const query: { -readonly [K in keyof ListTracesQuery]: ListTracesQuery[K] } = {};
  const project = one('project');
  if (project !== undefined) query.project = project;
  const name = one('name');
  if (name !== undefined) query.name = name;
  const status = oneOf('status', TRACE_STATUSES);
  if (status) query.status = status;
  const error = oneOf('error', ['true', 'false'] as const);
  if (error) query.error = error === 'true';
  const startAfter = time('start_after');
  if (startAfter) query.startAfter = startAfter;
  const startBefore = time('start_before');
  if (startBefore) query.startBefore = startBefore;
  const tag = one('tag');
  if (tag !== undefined) query.tag = tag;
  const metadata = raw.metadata === undefined ? [] : Array.isArray(raw.metadata) ? raw.metadata : [raw.metadata];
  if (metadata.length > 0) {
    const pairs: Record<string, string> = {};
    for (const entry of metadata) {
      const colon = entry.indexOf(':');
      if (colon <= 0) throw new QueryError('metadata', `expected key:value, not ${JSON.stringify(entry)}`);
      pairs[entry.slice(0, colon)] = entry.slice(colon + 1);
    }
    query.metadata = pairs;
  }
  const text = one('q');
  if (text !== undefined) query.text = text;
  const model = one('model');
  if (model !== undefined) query.model = model;
  const threadId = one('thread_id');
  if (threadId !== undefined) query.threadId = threadId;
  const sort = oneOf('sort', TRACE_SORT_FIELDS);
  if (sort) query.sort = sort;
  const order = oneOf('order', ['asc', 'desc'] as const);
  if (order) query.order = order;
  const limit = one('limit');
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000) {
      throw new QueryError('limit', `must be an integer from 1 to 1000, not ${JSON.stringify(limit)}`);
    }
    query.limit = Number(limit);
  }
  const cursor = one('cursor');
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/** A page of `GET /api/traces`. */
export function tracePage(store: LocalTraceStore, query: ListTracesQuery, pricer: Pricer) {
  const page = store.queryTraces(query);
  const costs = tracesCost(store, page.traces, pricer);
  return {
    traces: page.traces.map((summary) => summaryBody(summary, costs.get(summary.traceId))),
    next_cursor: page.nextCursor ?? null,
  };
}

/** `GET /api/traces/{trace_id}`: the summary and every run, parents first. */
export function traceBody(store: LocalTraceStore, trace: StoredTrace, pricer: Pricer) {
  const cost = tracesCost(store, [trace.summary], pricer).get(trace.summary.traceId);
  const counted = new Set(trace.countedUsageRunIds);
  return {
    trace: summaryBody(trace.summary, cost),
    runs: trace.runs.map((run) => runBody(run, pricer, counted)),
  };
}

/** A trace summary in the API's words. */
export function summaryBody(summary: TraceSummary, cost: Quote | undefined) {
  return {
    trace_id: summary.traceId,
    project: summary.project,
    name: summary.name ?? null,
    status: summary.status ?? 'pending',
    start_time: summary.startTime,
    end_time: summary.endTime ?? null,
    duration_ms: summary.durationMs ?? null,
    run_count: summary.runCount,
    error_count: summary.errorCount,
    root_run_id: summary.rootRunId ?? null,
    prompt_tokens: summary.promptTokens,
    completion_tokens: summary.completionTokens,
    total_tokens: summary.totalTokens,
    cost: cost?.cost ?? null,
    cost_source: sourceBody(cost?.source),
    model: summary.model ?? null,
    thread_id: summary.threadId ?? null,
    tags: summary.tags,
    metadata: summary.metadata,
    input_preview: summary.inputPreview ?? null,
    output_preview: summary.outputPreview ?? null,
  };
}

/** A run in the API's words: the usage it reported itself, and whether the trace's totals count it. */
function runBody(run: Run, pricer: Pricer, counted: ReadonlySet<string>) {
  const usage = usageOf(run);
  const metadata = run.extra?.metadata as Record<string, unknown> | undefined;
  const model = metadata?.ls_model_name;
  const provider = typeof metadata?.ls_provider === 'string' ? metadata.ls_provider : undefined;
  const quote: Quote | undefined =
    usage.cost !== undefined
      ? { cost: usage.cost, source: REPORTED }
      : typeof model === 'string' && usage.total > 0
        ? pricer.price(
            model,
            provider,
            {
              promptTokens: usage.prompt,
              completionTokens: usage.completion,
              cacheReadTokens: usage.cacheRead,
              cacheWriteTokens: usage.cacheWrite,
            },
            run.start_time,
          )
        : undefined;
  const duration = run.end_time ? (toMicros(run.end_time) - toMicros(run.start_time)) / 1000 : null;
  return {
    ...run,
    duration_ms: duration,
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.total,
    cache_read_tokens: usage.cacheRead,
    cost: quote?.cost ?? null,
    cost_source: sourceBody(quote?.source),
    // null when the run reported no usage; false when the same tokens count on another run.
    usage_counted: usage.total > 0 || usage.cost !== undefined ? counted.has(run.id) : null,
  };
}

/**
 * Each trace's cost: what its runs reported plus their tokens at known prices (configured, else
 * the price table), with the sources; none when a run with tokens has a model nobody prices (a
 * partial sum would mislead) or nothing is known.
 */
export function tracesCost(
  store: LocalTraceStore,
  traces: readonly TraceSummary[],
  pricer: Pricer,
): Map<string, Quote> {
  const sums = new Map<string, { cost: number; sources: CostSource[] }>();
  const unknown = new Set<string>();
  const add = (traceId: string, quote: Quote) => {
    const sum = sums.get(traceId) ?? { cost: 0, sources: [] };
    sum.cost += quote.cost;
    sum.sources.push(quote.source);
    sums.set(traceId, sum);
  };
  for (const summary of traces) {
    if (summary.reportedCost !== undefined) add(summary.traceId, { cost: summary.reportedCost, source: REPORTED });
  }
  for (const usage of store.modelUsage(traces.map((t) => t.traceId))) {
    if (usage.promptTokens + usage.completionTokens === 0) continue;
    const quote = pricer.price(usage.model, usage.provider, usage, usage.startTime);
    if (quote) add(usage.traceId, quote);
    else unknown.add(usage.traceId);
  }
  const costs = new Map<string, Quote>();
  for (const [traceId, sum] of sums) {
    if (!unknown.has(traceId)) costs.set(traceId, { cost: sum.cost, source: combinedSource(sum.sources)! });
  }
  return costs;
}

/** A conversation in the API's words, with its total cost when every turn's is known. */
function threadBody(thread: ThreadSummary) {
  return {
    thread_id: thread.threadId,
    project: thread.project,
    turns: thread.turns,
    start_time: thread.startTime,
    last_time: thread.lastTime,
    error_turns: thread.errorTurns,
    total_tokens: thread.totalTokens,
    duration_ms: thread.durationMs,
    input_preview: thread.inputPreview ?? null,
    output_preview: thread.outputPreview ?? null,
  };
}

/**
 * `GET /api/threads`: conversations, the latest activity first. Without `cost`: pricing a page
 * would price every turn of every thread on it, and `null` would say "unknown" where it is only
 * not computed; `GET /api/threads/{thread_id}` gives it.
 */
export function threadPage(store: LocalTraceStore, query: { project?: string; limit?: number; cursor?: string }) {
  const page = store.listThreads(query);
  return {
    threads: page.threads.map((thread) => threadBody(thread)),
    next_cursor: page.nextCursor ?? null,
  };
}

/** `GET /api/threads/{thread_id}`: the conversation and its turns, oldest first, with their costs. */
export function threadDetail(store: LocalTraceStore, threadId: string, pricer: Pricer) {
  const found = store.getThread(threadId);
  if (!found) return undefined;
  const costs = tracesCost(store, found.turns, pricer);
  const known = found.turns.map((turn) => costs.get(turn.traceId));
  const total = known.every((quote) => quote !== undefined)
    ? { cost: known.reduce((sum, quote) => sum + quote.cost, 0), source: combinedSource(known.map((q) => q.source))! }
    : undefined;
  const cost = known.length > 0 ? total : undefined;
  return {
    thread: { ...threadBody(found.thread), cost: cost?.cost ?? null, cost_source: sourceBody(cost?.source) },
    turns: found.turns.map((turn, index) => summaryBody(turn, known[index])),
  };
}

/** The query of `GET /api/threads`; throws QueryError naming the field. */
export function parseThreadQuery(raw: RawQuery) {
  queryReader(raw, ['project', 'limit', 'cursor']);
  // The trace list's parameters of the same names, read the same way.
  const query = parseTraceQuery(raw);
  return {
    ...(query.project !== undefined ? { project: query.project } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  };
}

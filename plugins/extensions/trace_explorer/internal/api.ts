// The trace query API's request parsing and response bodies: query-string filters checked one by
// one (a bad value names its field), summaries in the API's snake_case with a cost where prices
// are known, and a trace's runs with their durations, tokens and costs.

import type { Run } from '../../../../src/model/runs.ts';
import type { ListTracesQuery, LocalTraceStore, StoredTrace, TraceSummary } from '../../../exporters/local/store.ts';
import { TRACE_SORT_FIELDS, TRACE_STATUSES, toMicros, usageOf } from '../../../exporters/local/store.ts';

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

export type Prices = Readonly<Record<string, { readonly input: number; readonly output: number }>>;

const KNOWN = new Set([
  'project',
  'name',
  'status',
  'error',
  'start_after',
  'start_before',
  'tag',
  'metadata',
  'q',
  'sort',
  'order',
  'limit',
  'cursor',
]);

/** The store query of `GET /api/traces`'s query string; throws QueryError naming the field. */
export function parseTraceQuery(raw: Record<string, string | string[] | undefined>): ListTracesQuery {
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw new QueryError(key, `unknown parameter (known: ${[...KNOWN].join(', ')})`);
  }
  const one = (key: string): string | undefined => {
    const value = raw[key];
    if (Array.isArray(value)) throw new QueryError(key, 'give it once');
    return value === undefined || value === '' ? undefined : value;
  };
  const time = (key: string) => {
    const value = one(key);
    if (value === undefined) return undefined;
    try {
      toMicros(value);
    } catch {
      throw new QueryError(key, `not an RFC 3339 time such as 2026-01-01T12:00:00Z: ${JSON.stringify(value)}`);
    }
    return value;
  };
  const oneOf = <T extends string>(key: string, allowed: readonly T[]): T | undefined => {
    const value = one(key);
    if (value !== undefined && !allowed.includes(value as T)) {
      throw new QueryError(key, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
    }
    return value as T | undefined;
  };
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
export function tracePage(store: LocalTraceStore, query: ListTracesQuery, prices: Prices) {
  const page = store.queryTraces(query);
  const costs = tracesCost(store, page.traces, prices);
  return {
    traces: page.traces.map((summary) => summaryBody(summary, costs.get(summary.traceId))),
    next_cursor: page.nextCursor ?? null,
  };
}

/** `GET /api/traces/{trace_id}`: the summary and every run, parents first. */
export function traceBody(store: LocalTraceStore, trace: StoredTrace, prices: Prices) {
  const cost = tracesCost(store, [trace.summary], prices).get(trace.summary.traceId);
  return {
    trace: summaryBody(trace.summary, cost),
    runs: trace.runs.map((run) => runBody(run, prices)),
  };
}

function summaryBody(summary: TraceSummary, cost: number | undefined) {
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
    cost: cost ?? null,
    tags: summary.tags,
    metadata: summary.metadata,
    input_preview: summary.inputPreview ?? null,
    output_preview: summary.outputPreview ?? null,
  };
}

function runBody(run: Run, prices: Prices) {
  const usage = usageOf(run);
  const model = (run.extra?.metadata as Record<string, unknown> | undefined)?.ls_model_name;
  const price = typeof model === 'string' ? prices[model] : undefined;
  const cost =
    usage.cost ?? (price ? (usage.prompt * price.input + usage.completion * price.output) / 1_000_000 : undefined);
  const duration = run.end_time ? (toMicros(run.end_time) - toMicros(run.start_time)) / 1000 : null;
  return {
    ...run,
    duration_ms: duration,
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.total,
    cost: cost ?? null,
  };
}

/**
 * Each trace's cost: what its runs reported plus their tokens at the configured prices; undefined
 * when a run with tokens has a model without a price (a partial sum would mislead) or nothing
 * is known.
 */
function tracesCost(store: LocalTraceStore, traces: readonly TraceSummary[], prices: Prices): Map<string, number> {
  const costs = new Map<string, number>();
  const unknown = new Set<string>();
  for (const summary of traces)
    if (summary.reportedCost !== undefined) costs.set(summary.traceId, summary.reportedCost);
  for (const usage of store.modelUsage(traces.map((t) => t.traceId))) {
    if (usage.promptTokens + usage.completionTokens === 0) continue;
    const price = prices[usage.model];
    if (!price) {
      unknown.add(usage.traceId);
      continue;
    }
    const cost = (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
    costs.set(usage.traceId, (costs.get(usage.traceId) ?? 0) + cost);
  }
  for (const id of unknown) costs.delete(id);
  return costs;
}

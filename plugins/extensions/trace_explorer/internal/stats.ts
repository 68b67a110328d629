// `GET /api/stats`: the monitoring figures of a time range, bucket by bucket and (optionally) one
// series per project, model or root name. The store computes them in SQL from its rollups and
// covering indexes (trace count, failed traces and latency percentiles by the trace's start; token
// usage by the run's start, per model); this module checks the query, prices the usage rows (a few per bucket
// and model, whatever the number of runs) and lays the result out as aligned arrays, the shape a
// chart draws.

import type { LocalTraceStore, StatsGroup } from 'tracepipe/tracestore';
import { STATS_GROUPS, fromMicros } from 'tracepipe/tracestore';
import type { RawQuery } from './api.ts';
import { QueryError, queryReader } from './api.ts';
import type { CostSource, Pricer } from './pricing.ts';
import { REPORTED, sourceBody } from './pricing.ts';

/** Bucket widths offered, in ms; `auto` takes the first that cuts the range into at most AUTO_BUCKETS. */
export const BUCKETS: Readonly<Record<string, number>> = {
  '1m': 60_000,
  '5m': 5 * 60_000,
  '15m': 15 * 60_000,
  '1h': 3600_000,
  '6h': 6 * 3600_000,
  '1d': 24 * 3600_000,
  '7d': 7 * 24 * 3600_000,
};
const AUTO_BUCKETS = 120;
const MAX_BUCKETS = 2000;
/** Series beyond these (the groups with fewest traces) are left out and counted. */
const MAX_SERIES = 10;
const DEFAULT_RANGE_MS = 24 * 3600_000;

export interface StatsRequest {
  readonly startUs: number;
  readonly endUs: number;
  readonly bucketMs: number;
  readonly groupBy?: StatsGroup;
  readonly project?: string;
}

const KNOWN = ['start_after', 'start_before', 'bucket', 'group_by', 'project'];

/** The stats query of a query string; throws QueryError naming the field. */
export function parseStatsQuery(raw: RawQuery, now = Date.now()): StatsRequest {
  const { one, time, oneOf } = queryReader(raw, KNOWN);
  const endUs = time('start_before') ?? now * 1000;
  const startUs = time('start_after') ?? endUs - DEFAULT_RANGE_MS * 1000;
  if (startUs >= endUs) throw new QueryError('start_after', 'must be before start_before');
  const spanMs = (endUs - startUs) / 1000;
  const bucket = one('bucket') ?? 'auto';
  let bucketMs: number;
  if (bucket === 'auto') {
    bucketMs =
      Object.values(BUCKETS).find((ms) => spanMs / ms <= AUTO_BUCKETS) ??
      Math.ceil(spanMs / AUTO_BUCKETS / 1000) * 1000;
  } else if (BUCKETS[bucket] !== undefined) {
    bucketMs = BUCKETS[bucket];
  } else {
    throw new QueryError(
      'bucket',
      `must be auto or one of ${Object.keys(BUCKETS).join(', ')}, not ${JSON.stringify(bucket)}`,
    );
  }
  if (Math.ceil(spanMs / bucketMs) > MAX_BUCKETS) {
    throw new QueryError(
      'bucket',
      `${bucket} cuts this range into more than ${MAX_BUCKETS} buckets; choose a wider one`,
    );
  }
  const groupBy = oneOf('group_by', STATS_GROUPS);
  const project = one('project');
  return {
    // Buckets start on multiples of their width (UTC), so that their times are round.
    startUs: Math.floor(startUs / (bucketMs * 1000)) * bucketMs * 1000,
    endUs,
    bucketMs,
    ...(groupBy !== undefined ? { groupBy: groupBy as StatsGroup } : {}),
    ...(project !== undefined ? { project } : {}),
  };
}

interface Series {
  group: string | null;
  traces: number[];
  errors: number[];
  error_rate: (number | null)[];
  latency_p50_ms: (number | null)[];
  latency_p95_ms: (number | null)[];
  latency_p99_ms: (number | null)[];
  total_tokens: number[];
  cost: number[];
  unpriced_tokens: number[];
}

/** The body of `GET /api/stats`. */
export function statsBody(store: LocalTraceStore, request: StatsRequest, pricer: Pricer) {
  const query = {
    startUs: request.startUs,
    endUs: request.endUs,
    bucketUs: request.bucketMs * 1000,
    ...(request.groupBy !== undefined ? { groupBy: request.groupBy } : {}),
    ...(request.project !== undefined ? { project: request.project } : {}),
  };
  const count = Math.ceil((request.endUs - request.startUs) / query.bucketUs);
  const times = Array.from({ length: count }, (_, i) => fromMicros(request.startUs + i * query.bucketUs));
  const series = new Map<string | null, Series>();
  const seriesOf = (group: string | null): Series => {
    let found = series.get(group);
    if (!found) {
      const zeros = () => new Array<number>(count).fill(0);
      const nulls = () => new Array<number | null>(count).fill(null);
      found = {
        group,
        traces: zeros(),
        errors: zeros(),
        error_rate: nulls(),
        latency_p50_ms: nulls(),
        latency_p95_ms: nulls(),
        latency_p99_ms: nulls(),
        total_tokens: zeros(),
        cost: zeros(),
        unpriced_tokens: zeros(),
      };
      series.set(group, found);
    }
    return found;
  };
  for (const row of store.traceStats(query)) {
    const s = seriesOf(row.group);
    s.traces[row.bucket] = row.traces;
    s.errors[row.bucket] = row.errors;
    s.error_rate[row.bucket] = row.traces > 0 ? row.errors / row.traces : null;
    s.latency_p50_ms[row.bucket] = row.p50;
    s.latency_p95_ms[row.bucket] = row.p95;
    s.latency_p99_ms[row.bucket] = row.p99;
  }
  const sources = new Map<string, CostSource>();
  for (const row of store.usageStats(query)) {
    const s = seriesOf(row.group);
    s.total_tokens[row.bucket]! += row.totalTokens;
    if (row.reportedCost !== null) {
      s.cost[row.bucket]! += row.reportedCost;
      sources.set(REPORTED.label, REPORTED);
    }
    const tokens = row.promptTokens + row.completionTokens;
    if (tokens === 0) continue;
    const quote =
      row.model === null ? undefined : pricer.price(row.model, row.provider ?? undefined, row, times[row.bucket]!);
    if (quote) {
      s.cost[row.bucket]! += quote.cost;
      // One entry per price, with the latest date it was applied at.
      const seen = sources.get(quote.source.label);
      if (!seen || (quote.source.asOf ?? '') > (seen.asOf ?? '')) sources.set(quote.source.label, quote.source);
    } else s.unpriced_tokens[row.bucket]! += tokens;
  }
  const total = (s: Series) => s.traces.reduce((a, b) => a + b, 0) + s.total_tokens.reduce((a, b) => a + b, 0) / 1e9;
  const ranked = [...series.values()].sort((a, b) => total(b) - total(a));
  return {
    start_time: fromMicros(request.startUs),
    end_time: fromMicros(request.endUs),
    bucket_ms: request.bucketMs,
    group_by: request.groupBy ?? null,
    times,
    series: ranked.slice(0, MAX_SERIES),
    series_left_out: Math.max(ranked.length - MAX_SERIES, 0),
    cost_sources: [...sources.values()].map(sourceBody),
  };
}

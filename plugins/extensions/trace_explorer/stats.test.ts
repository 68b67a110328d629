// Prices and monitoring figures of the explorer's API on a seeded store: token costs against the
// price table's own figures (configured prices and app-reported costs taking precedence), and
// `GET /api/stats` bucket by bucket against figures computed by hand below.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { calcPrice } from '@pydantic/genai-prices';
import Database from 'better-sqlite3';
import type { Run } from 'tracepipe/plugin';
import { tempDir, makeRun, validateAgainst } from 'tracepipe/testing';
import { LocalTraceStore } from 'tracepipe/tracestore';
import { QueryError, tracePage } from './internal/api.ts';
import { PRICE_TABLE, Pricer } from './internal/pricing.ts';
import { parseStatsQuery, statsBody } from './internal/stats.ts';

const at = (minute: number, second = 0) =>
  `2026-01-01T12:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;
const close = (actual: number | null | undefined, expected: number, what: string) =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-12,
    `${what}: ${actual} ≠ ${expected}`,
  );

interface Shape {
  minute: number;
  seconds: number;
  project?: string;
  model?: string;
  provider?: string;
  input?: number;
  output?: number;
  cached?: number;
  cacheWrite?: number;
  reportedCost?: number;
  error?: boolean;
}

/** A root (chain) lasting `seconds`, with an LLM child when a model is given. */
function trace(shape: Shape): Run[] {
  const root = makeRun({
    name: `agent-${shape.project ?? 'a'}`,
    run_type: 'chain',
    start_time: at(shape.minute),
    end_time: at(shape.minute, shape.seconds),
    session_name: shape.project ?? 'a',
    extra: { metadata: {} },
    outputs: { answer: 'ok' },
  });
  if (shape.model === undefined && !shape.error) return [root];
  const llm = makeRun({
    trace_id: root.id,
    parent_run_id: root.id,
    start_time: at(shape.minute, 0),
    end_time: at(shape.minute, 1),
    dotted_order: `${root.dotted_order}.20260101T120000000001Z${root.id}`,
    session_name: shape.project ?? 'a',
    ...(shape.error ? { status: 'error' as const, error: 'rate limited' } : {}),
    extra: {
      metadata: {
        ...(shape.model !== undefined ? { ls_model_name: shape.model } : {}),
        ...(shape.provider !== undefined ? { ls_provider: shape.provider } : {}),
      },
    },
    outputs:
      shape.model === undefined
        ? {}
        : {
            usage_metadata: {
              input_tokens: shape.input ?? 0,
              output_tokens: shape.output ?? 0,
              total_tokens: (shape.input ?? 0) + (shape.output ?? 0),
              ...(shape.cached !== undefined || shape.cacheWrite !== undefined
                ? {
                    input_token_details: {
                      ...(shape.cached !== undefined ? { cache_read: shape.cached } : {}),
                      ...(shape.cacheWrite !== undefined ? { cache_creation: shape.cacheWrite } : {}),
                    },
                  }
                : {}),
              ...(shape.reportedCost !== undefined ? { total_cost: shape.reportedCost } : {}),
            },
          },
  });
  return [root, llm];
}

describe('prices', () => {
  const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
    promptTokens: input,
    completionTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  });

  it("prices tokens with the table's figures: input, cached input and output separately", () => {
    const pricer = new Pricer({});
    // gpt-4o-mini in the table: $0.15 per million input tokens, $0.075 cached, $0.60 output.
    const mini = pricer.price('gpt-4o-mini', 'openai', usage(150, 34), '2026-01-01T12:00:00Z')!;
    close(mini.cost, (150 * 0.15 + 34 * 0.6) / 1e6, 'gpt-4o-mini, 184 tokens');
    assert.equal(mini.source.kind, 'price_table');
    assert.equal(mini.source.label, `${PRICE_TABLE}: OpenAI gpt 4o mini`);
    assert.equal(mini.source.asOf, '2026-01-01');
    assert.match(mini.source.url!, /^https:\/\//);
    const cached = pricer.price('gpt-4o-mini', 'openai', usage(1000, 100, 800), '2026-01-01T12:00:00Z')!;
    close(cached.cost, (200 * 0.15 + 800 * 0.075 + 100 * 0.6) / 1e6, 'gpt-4o-mini with cached input');
    // The table's own README example: Claude Sonnet 4 writing 4,735 of 4,740 input tokens to the
    // cache ($3 input, $3.75 cache write, $15 output per million).
    const sonnet = pricer.price('claude-sonnet-4-20250514', 'anthropic', usage(4740, 255, 0, 4735), at(0))!;
    close(sonnet.cost, (5 * 3 + 4735 * 3.75 + 255 * 15) / 1e6, 'claude-sonnet-4 with cache writes');
    // A provider name the table does not know does not prevent the match by model.
    close(pricer.price('gpt-4o-mini', 'my-gateway', usage(150, 34), at(0))!.cost, mini.cost, 'unknown provider');
    assert.equal(pricer.price('no-such-model-anywhere', undefined, usage(10, 10), at(0)), undefined);
  });

  it("multiplies a flat-priced model's rates to the same figures as the table's own calculation", () => {
    const pricer = new Pricer({});
    const models = [
      ['gpt-4o-mini', 'openai'],
      ['claude-sonnet-4-20250514', 'anthropic'],
      ['gemini-2.0-flash', 'google'],
      ['gpt-4o', undefined],
    ] as const;
    let seed = 7;
    const next = (max: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % max;
    for (let i = 0; i < 200; i++) {
      const [model, provider] = models[i % models.length]!;
      const input = next(20_000);
      const cached = i % 3 === 0 ? next(input + 1) : 0;
      const written = i % 5 === 0 ? next(input - cached + 1) : 0;
      const output = next(5000);
      const quote = pricer.price(model, provider, usage(input, output, cached, written), at(0))!;
      const table = calcPrice(
        { input_tokens: input, output_tokens: output, cache_read_tokens: cached, cache_write_tokens: written },
        model,
        { ...(provider ? { providerId: provider } : {}), timestamp: new Date('2026-01-01T00:00:00Z') },
      )!;
      assert.ok(Math.abs(quote.cost - table.total_price) < 1e-12, `${model} ${input}/${cached}/${written}/${output}`);
    }
  });

  it('lets configured prices win over the table, and costs the app reports win over both', () => {
    const store = new LocalTraceStore(':memory:');
    store.insertRuns(trace({ minute: 1, seconds: 2, model: 'gpt-4o-mini', input: 150, output: 34 }), 'a');
    store.insertRuns(
      trace({ minute: 2, seconds: 2, model: 'gpt-4o-mini', input: 150, output: 34, reportedCost: 0.25 }),
      'a',
    );
    const cost = (prices: ConstructorParameters<typeof Pricer>[0]) =>
      tracePage(store, {}, new Pricer(prices)).traces.map((t) => [t.cost, t.cost_source?.kind]);
    const table = cost({});
    assert.equal(table[0]![1], 'reported');
    assert.equal(table[0]![0], 0.25);
    assert.equal(table[1]![1], 'price_table');
    close(table[1]![0] as number, (150 * 0.15 + 34 * 0.6) / 1e6, 'table price');
    const configured = cost({ 'gpt-4o-mini': { input: 1, output: 2, cache_read: 0.5 } });
    assert.deepEqual(configured[0], [0.25, 'reported']);
    assert.equal(configured[1]![1], 'configured');
    close(configured[1]![0] as number, (150 * 1 + 34 * 2) / 1e6, 'configured price');
    store.close();
  });
});

describe('GET /api/stats', () => {
  // 12:00–13:00 in buckets of 15 minutes:
  //   12:00  four traces: 1 s, 2 s (a failed run), 3 s, 4 s
  //   12:15  none
  //   12:30  two traces: 10 s, 20 s (a failed run)
  //   12:45  one trace of 5 s whose model no table prices
  // and one trace at 13:05, outside the range.
  const shapes: Shape[] = [
    { minute: 1, seconds: 1, project: 'a', model: 'gpt-4o-mini', input: 100, output: 20 },
    { minute: 2, seconds: 2, project: 'a', model: 'gpt-4o-mini', input: 100, output: 20, error: true },
    { minute: 3, seconds: 3, project: 'b', model: 'house-model', input: 1000, output: 500 },
    { minute: 4, seconds: 4, project: 'b', model: 'gpt-4o', input: 10, output: 10, reportedCost: 0.5 },
    { minute: 31, seconds: 10, project: 'a', model: 'gpt-4o-mini', input: 1000, output: 100, cached: 800 },
    { minute: 32, seconds: 20, project: 'a', error: true },
    { minute: 50, seconds: 5, project: 'b', model: 'my-own-model', input: 50, output: 50 },
  ];
  const seeded = () => {
    const store = new LocalTraceStore(':memory:');
    for (const shape of shapes) store.insertRuns(trace(shape), 'a');
    const late = trace({ minute: 0, seconds: 1, model: 'gpt-4o-mini', input: 5, output: 5 });
    for (const run of late) {
      run.start_time = run.start_time.replace('T12:', 'T13:').replace(':00:', ':05:');
      run.end_time = run.end_time!.replace('T12:', 'T13:').replace(':00:', ':05:');
    }
    store.insertRuns(late, 'a');
    return store;
  };
  const pricer = new Pricer({ 'house-model': { input: 1, output: 2 } });
  const query = (extra: Record<string, string> = {}) =>
    parseStatsQuery({
      start_after: '2026-01-01T12:00:00Z',
      start_before: '2026-01-01T13:00:00Z',
      bucket: '15m',
      ...extra,
    });

  it('counts traces and failures, latency percentiles, tokens and cost per bucket', () => {
    const store = seeded();
    const body = statsBody(store, query(), pricer);
    assert.equal(body.bucket_ms, 15 * 60_000);
    assert.deepEqual(body.times, [
      '2026-01-01T12:00:00.000000Z',
      '2026-01-01T12:15:00.000000Z',
      '2026-01-01T12:30:00.000000Z',
      '2026-01-01T12:45:00.000000Z',
    ]);
    assert.equal(body.series.length, 1);
    const s = body.series[0]!;
    assert.equal(s.group, null);
    assert.deepEqual(s.traces, [4, 0, 2, 1]);
    assert.deepEqual(s.errors, [1, 0, 1, 0]);
    assert.deepEqual(s.error_rate, [0.25, null, 0.5, 0]);
    // Percentiles interpolate between the two nearest values (SQLite's percentile()): of 1, 2, 3
    // and 4 s, p50 = 2.5 s, p95 at rank 0.95 × 3 = 2.85 → 3.85 s, p99 at 2.97 → 3.97 s.
    assert.deepEqual(s.latency_p50_ms, [2500, null, 15000, 5000]);
    assert.deepEqual(s.latency_p95_ms, [3850, null, 19500, 5000]);
    assert.deepEqual(s.latency_p99_ms, [3970, null, 19900, 5000]);
    assert.deepEqual(s.total_tokens, [120 + 120 + 1500 + 20, 0, 1100, 100]);
    // 12:00: two gpt-4o-mini calls of 100 + 20 tokens at the table's $0.15 / $0.60, house-model
    // at its configured $1 / $2, and $0.50 that gpt-4o run reported.
    close(s.cost[0], 2 * ((100 * 0.15 + 20 * 0.6) / 1e6) + (1000 * 1 + 500 * 2) / 1e6 + 0.5, 'cost at 12:00');
    close(s.cost[2], (200 * 0.15 + 800 * 0.075 + 100 * 0.6) / 1e6, 'cost at 12:30 (800 cached)');
    assert.deepEqual(s.unpriced_tokens, [0, 0, 0, 100]);
    assert.deepEqual(body.cost_sources.map((source) => source!.kind).sort(), ['configured', 'price_table', 'reported']);
    store.close();
  });

  it('splits by project, model and root name', () => {
    const store = seeded();
    const byProject = statsBody(store, query({ group_by: 'project' }), pricer);
    const series = (group: string | null) => byProject.series.find((s) => s.group === group)!;
    assert.deepEqual(
      byProject.series.map((s) => s.group),
      ['a', 'b'],
    );
    assert.deepEqual(series('a').traces, [2, 0, 2, 0]);
    assert.deepEqual(series('b').traces, [2, 0, 0, 1]);
    assert.deepEqual(series('a').latency_p50_ms, [1500, null, 15000, null]);
    assert.deepEqual(series('b').total_tokens, [1520, 0, 0, 100]);

    const byModel = statsBody(store, query({ group_by: 'model' }), pricer);
    const model = (group: string | null) => byModel.series.find((s) => s.group === group)!;
    assert.deepEqual(model('gpt-4o-mini').traces, [2, 0, 1, 0]);
    assert.deepEqual(model(null).traces, [0, 0, 1, 0], 'a trace without a model call');
    assert.deepEqual(model('my-own-model').unpriced_tokens, [0, 0, 0, 100]);

    const byName = statsBody(store, query({ group_by: 'name', project: 'b' }), pricer);
    assert.deepEqual(
      byName.series.map((s) => [s.group, s.traces]),
      [['agent-b', [2, 0, 0, 1]]],
    );
    assert.deepEqual(byName.series[0]!.total_tokens, [1520, 0, 0, 100]);
    store.close();
  });

  it('splits usage by a root name that arrives after its model calls, and by the names of an upgraded store', () => {
    const path = join(tempDir('tp-stats-'), 'v3.db');
    const store = new LocalTraceStore(path);
    const [root, llm] = trace({ minute: 1, seconds: 2, project: 'late', model: 'gpt-4o-mini', input: 7, output: 3 });
    store.insertRuns([llm!], 'late');
    const names = () =>
      statsBody(store, query({ group_by: 'name', project: 'late' }), pricer).series.map((s) => [
        s.group,
        s.total_tokens[0],
      ]);
    assert.deepEqual(names(), [[null, 10]], 'usage before its trace has a root');
    store.insertRuns([root!], 'late');
    assert.deepEqual(names(), [['agent-late', 10]]);
    store.close();

    // As a file of version 3 was: no root name on the runs, usage indexed without it.
    const raw = new Database(path);
    raw.exec(`UPDATE runs SET root_name = NULL; DROP INDEX runs_usage_by_start;
      CREATE INDEX runs_usage_by_time ON runs (start_us, project, model) WHERE total_tokens > 0 OR cost IS NOT NULL;
      PRAGMA user_version = 3`);
    raw.close();
    const upgraded = new LocalTraceStore(path);
    assert.deepEqual(
      statsBody(upgraded, query({ group_by: 'name', project: 'late' }), pricer).series.map((s) => s.group),
      ['agent-late'],
    );
    upgraded.close();
    const check = new Database(path);
    assert.deepEqual(
      check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'runs_usage%'").pluck().all(),
      ['runs_usage_by_start'],
    );
    check.close();
  });

  it('answers in the shape /openapi.json documents', () => {
    const openapi = JSON.parse(readFileSync(join(import.meta.dirname, 'openapi.json'), 'utf8')) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: object }> }> } }>;
      components: object;
    };
    const documented = openapi.paths['/api/stats']!.get.responses['200']!.content['application/json']!.schema;
    const schema = { ...documented, components: openapi.components };
    const store = seeded();
    const splits: Record<string, string>[] = [{}, { group_by: 'project' }, { group_by: 'model' }, { group_by: 'name' }];
    for (const extra of splits) {
      const body = JSON.parse(JSON.stringify(statsBody(store, query(extra), pricer))) as unknown;
      assert.deepEqual(validateAgainst(schema, body, 'stats'), [], JSON.stringify(extra));
    }
    store.close();
  });

  it('answers a bad query with the parameter it names', () => {
    const field = (raw: Record<string, string>) => {
      try {
        parseStatsQuery(raw);
      } catch (error) {
        assert.ok(error instanceof QueryError);
        return error.field;
      }
      return undefined;
    };
    assert.equal(field({ bucket: '3m' }), 'bucket');
    assert.equal(field({ group_by: 'colour' }), 'group_by');
    assert.equal(field({ start_after: 'yesterday' }), 'start_after');
    assert.equal(field({ start_after: '2026-01-02T00:00:00Z', start_before: '2026-01-01T00:00:00Z' }), 'start_after');
    assert.equal(
      field({ start_after: '2020-01-01T00:00:00Z', start_before: '2026-01-01T00:00:00Z', bucket: '1m' }),
      'bucket',
    );
    assert.equal(field({ colour: 'red' }), 'colour');
    // auto: the first width that makes at most 120 buckets.
    assert.equal(
      parseStatsQuery({ start_after: '2026-01-01T00:00:00Z', start_before: '2026-01-01T01:00:00Z' }).bucketMs,
      60_000,
    );
    assert.equal(
      parseStatsQuery({ start_after: '2026-01-01T00:00:00Z', start_before: '2026-01-08T00:00:00Z' }).bucketMs,
      6 * 3600_000,
    );
  });
});

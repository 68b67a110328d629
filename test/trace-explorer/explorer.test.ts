// The trace explorer end to end: a real pipeline (otlp receiver → genai → batch → local exporter)
// with the extension enabled; an OTLP/HTTP trace is posted to the receiver and found through the
// query API and in the web pages, driven in Debian's Chromium through playwright-core. Screenshots
// of each page land in test-output/ for a reviewer. Bad input gets JSON errors naming the field.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { isTraceViewer } from 'tracepipe/plugin';
import type { Service } from 'tracepipe';
import { eventually } from 'tracepipe/testing';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { isStudioLinkTarget } from '../../plugins/extensions/trace_explorer/studio-link.ts';
import { startService } from '../support/service.ts';
import { OUTPUT } from './support.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-explorer-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TRACE_HEX = '5b8efff798038103d269b633813fc60c';
const TRACE_UUID = '5b8efff7-9803-8103-d269-b633813fc60c';
const ns = (ms: number) => String(BigInt(Date.UTC(2026, 0, 1, 12, 0, 0) + ms) * 1_000_000n);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });

/** An agent span with a chat model call (a tool call in its answer) and a failing tool under it. */
function otlpBody() {
  const span = (
    id: string,
    parent: string | undefined,
    name: string,
    from: number,
    to: number,
    attributes: unknown[],
    status = 1,
  ) => ({
    traceId: TRACE_HEX,
    spanId: id,
    ...(parent ? { parentSpanId: parent } : {}),
    name,
    kind: 1,
    startTimeUnixNano: ns(from),
    endTimeUnixNano: ns(to),
    attributes,
    status: { code: status, ...(status === 2 ? { message: 'weather service unavailable' } : {}) },
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'weather-app')] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              // The agent span repeats its model call's usage (the turn's): shown on its run, not counted twice.
              span('aaaaaaaaaaaaaaa1', undefined, 'weather agent', 0, 2400, [
                str('gen_ai.operation.name', 'invoke_agent'),
                int('gen_ai.usage.input_tokens', 1000),
                int('gen_ai.usage.output_tokens', 200),
              ]),
              span('aaaaaaaaaaaaaaa2', 'aaaaaaaaaaaaaaa1', 'chat gpt-4o-mini', 100, 1300, [
                str('gen_ai.operation.name', 'chat'),
                str('gen_ai.request.model', 'gpt-4o-mini'),
                str(
                  'gen_ai.input.messages',
                  JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }]),
                ),
                str(
                  'gen_ai.output.messages',
                  JSON.stringify([
                    {
                      role: 'assistant',
                      parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
                    },
                  ]),
                ),
                int('gen_ai.usage.input_tokens', 1000),
                int('gen_ai.usage.output_tokens', 200),
              ]),
              span(
                'aaaaaaaaaaaaaaa3',
                'aaaaaaaaaaaaaaa1',
                'execute_tool get_weather',
                1400,
                2300,
                [str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', 'get_weather')],
                2,
              ),
            ],
          },
        ],
      },
    ],
  };
}

describe('trace explorer', () => {
  let service: Service;
  let explorer: string;
  let otlp: string;

  before(async () => {
    const yaml = `
receivers: { otlp: { port: 0, require_api_key: false } }
processors: { genai: {}, batch: { flush_interval_ms: 50 } }
exporters: { local: { path: ${join(dir, 'traces.db')} } }
extensions:
  trace_explorer:
    port: 0
    path: ${join(dir, 'traces.db')}
    prices: { gpt-4o-mini: { input: 0.15, output: 0.6 } }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [otlp], processors: [genai, batch], exporters: [local] } }
`;
    const started = await startService(yaml, dir);
    service = started.service;
    otlp = started.endpoint('otlp');
    explorer = started.endpoint('trace_explorer').replace(/\/ui\/traces$/, '');
    const response = await fetch(otlp, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlpBody()),
    });
    assert.equal(response.status, 200);
  });

  after(async () => {
    await service?.shutdown();
  });

  it('answers the query API with the posted trace, its run tree, tokens and cost', async () => {
    const page = await eventually(async () => {
      const body = (await (await fetch(`${explorer}/api/traces`)).json()) as { traces: Record<string, unknown>[] };
      assert.equal(body.traces.length, 1);
      assert.equal(body.traces[0]!.run_count, 3);
      return body;
    });
    const summary = page.traces[0]!;
    assert.equal(summary.trace_id, TRACE_UUID);
    assert.equal(summary.name, 'weather agent');
    assert.equal(summary.error_count, 1);
    assert.equal(summary.total_tokens, 1200);
    assert.equal(summary.duration_ms, 2400);
    assert.ok(Math.abs((summary.cost as number) - (1000 * 0.15 + 200 * 0.6) / 1e6) < 1e-12);
    const trace = (await (await fetch(`${explorer}/api/traces/${TRACE_UUID}`)).json()) as {
      runs: Record<string, unknown>[];
    };
    assert.deepEqual(
      trace.runs.map((run) => run.name),
      ['weather agent', 'chat gpt-4o-mini', 'execute_tool get_weather'],
    );
    assert.equal(trace.runs[2]!.status, 'error');
    assert.equal(trace.runs[1]!.parent_run_id, trace.runs[0]!.id);
    // Each run's own usage, and whether the trace's totals count it: the model call's, not the agent's repeat.
    assert.deepEqual(
      trace.runs.map((run) => [run.total_tokens, run.usage_counted]),
      [
        [1200, false],
        [1200, true],
        [0, null],
      ],
    );
    // Filters and the cursor.
    const filtered = async (query: string) =>
      ((await (await fetch(`${explorer}/api/traces?${query}`)).json()) as { traces: unknown[] }).traces.length;
    assert.equal(await filtered('error=true&q=Paris'), 1);
    assert.equal(await filtered('status=error'), 0);
    assert.equal(await filtered('start_after=2026-01-02T00:00:00Z'), 0);
    // The extension is found through the host, as the agent server finds it.
    const found = service.host.getExtensions().get('trace_explorer');
    assert.ok(isTraceViewer(found));
    assert.equal(found.traceUrl(TRACE_UUID, 'r1'), `${explorer}/ui/traces/${TRACE_UUID}?run=r1`);
  });

  it('exports a trace and a filtered list as runs, the body of a batch upload', async () => {
    await eventually(async () => assert.equal((await fetch(`${explorer}/api/traces/${TRACE_UUID}`)).status, 200));
    const one = await fetch(`${explorer}/api/traces/${TRACE_UUID}/export`);
    assert.equal(one.status, 200);
    assert.equal(one.headers.get('content-disposition'), `attachment; filename="trace-${TRACE_UUID}.json"`);
    const body = (await one.json()) as { post: Record<string, unknown>[] };
    assert.deepEqual(
      body.post.map((run) => run.name),
      ['weather agent', 'chat gpt-4o-mini', 'execute_tool get_weather'],
    );
    // As stored: the run model, without the API's derived fields.
    assert.equal(body.post[1]!.run_type, 'llm');
    assert.equal(body.post[1]!.trace_id, TRACE_UUID);
    assert.equal(body.post[1]!.cost, undefined);
    const list = (await (await fetch(`${explorer}/api/export?q=weather`)).json()) as { post: { trace_id: string }[] };
    assert.ok(list.post.length >= 3);
    assert.ok(list.post.some((run) => run.trace_id === TRACE_UUID));
    const none = (await (await fetch(`${explorer}/api/export?q=nowhere`)).json()) as { post: unknown[] };
    assert.deepEqual(none.post, []);
    assert.equal((await fetch(`${explorer}/api/traces/00000000-0000-0000-0000-000000000000/export`)).status, 404);
    assert.equal((await fetch(`${explorer}/api/export?sort=cost`)).status, 422);
  });

  it('answers bad input with JSON errors naming the field, and an unknown trace with 404', async () => {
    const unknown = await fetch(`${explorer}/api/traces/00000000-0000-0000-0000-000000000000`);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, 'TP_ERR_API_NOT_FOUND');
    for (const [query, field] of [
      ['traces?limit=0', 'limit'],
      ['traces?status=done', 'status'],
      ['traces?start_after=yesterday', 'start_after'],
      ['traces?sort=cost', 'sort'],
      ['traces?cursor=nonsense', 'cursor'],
      ['traces?metadata=novalue', 'metadata'],
      ['traces?colour=red', 'colour'],
      ['stats?bucket=2m', 'bucket'],
      ['stats?group_by=colour', 'group_by'],
      ['threads?limit=5000', 'limit'],
      ['threads?cursor=nonsense', 'cursor'],
    ]) {
      const response = await fetch(`${explorer}/api/${query}`);
      assert.equal(response.status, 422, query);
      const body = (await response.json()) as { field: string; message: string; code: string };
      assert.equal(body.field, field, query);
      assert.ok(body.message.startsWith(`${field}:`), body.message);
      assert.equal(body.code, 'TP_ERR_API_INVALID');
    }
    const openapi = (await (await fetch(`${explorer}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const path of [
      '/api/traces/{trace_id}',
      '/api/stats',
      '/api/threads',
      '/api/threads/{thread_id}',
      '/api/export',
    ]) {
      assert.ok(openapi.paths[path], path);
    }
    const unknownThread = await fetch(`${explorer}/api/threads/nope`);
    assert.equal(unknownThread.status, 404);
    // fetch() cannot set Host; node:http can, as a DNS-rebinding page's browser would send it.
    const url = new URL(`${explorer}/api/traces`);
    const rebinding = await new Promise<{ status: number }>((resolve, reject) => {
      request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      })
        .on('error', reject)
        .end();
    });
    assert.equal(rebinding.status, 403);
  });

  it('finds a trace by its id in either form: OTLP’s 32 hex digits or the stored UUID', async () => {
    for (const id of [TRACE_HEX, TRACE_UUID, TRACE_HEX.toUpperCase()]) {
      const response = await fetch(`${explorer}/api/traces/${id}`);
      assert.equal(response.status, 200, id);
      assert.equal(((await response.json()) as { trace: { trace_id: string } }).trace.trace_id, TRACE_UUID);
    }
  });

  describe('in a browser', { skip: noChromium }, () => {
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];
    const foreign: string[] = [];
    before(async () => {
      mkdirSync(OUTPUT, { recursive: true });
      browser = await launchChromium(chromium);
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('request', (request) => {
        if (!request.url().startsWith(explorer) && !request.url().startsWith('data:')) foreign.push(request.url());
      });
    });
    after(async () => {
      await browser?.close();
      assert.deepEqual(pageErrors, [], 'the page threw');
      assert.deepEqual(foreign, [], 'the page must not reach other origins');
    });

    it('lists the trace, opens its waterfall and shows a run as a chat with tool calls and tokens', async () => {
      await page.goto(`${explorer}/`);
      const link = page.getByRole('link', { name: 'weather agent' });
      await eventually(async () => assert.equal(await link.count(), 1));
      assert.match(await page.locator('table.traces tbody tr').first().innerText(), /1200/);
      await page.screenshot({ path: join(OUTPUT, 'explorer-traces.png'), fullPage: true });

      // Filters live in the URL.
      await page.getByLabel('Search').fill('no such text anywhere');
      await page.getByRole('button', { name: 'Search' }).click();
      await eventually(async () => assert.equal(await page.locator('.empty').count(), 1));
      assert.match(page.url(), /q=no\+such/);

      // A time range: the trace (of 2026-01-01) is not among the last 15 minutes' ones, the URL
      // keeps the range, and the API is asked for traces started since 15 minutes ago.
      await page.goto(`${explorer}/ui/traces`);
      await eventually(async () => assert.equal(await link.count(), 1));
      const ranged = page.waitForRequest((r) => /\/api\/traces\?(.*&)?start_after=/.test(r.url()));
      await page.getByLabel('Time range').selectOption({ label: 'Last 15 minutes' });
      const since = Date.parse(new URL((await ranged).url()).searchParams.get('start_after')!);
      assert.ok(Math.abs(Date.now() - 15 * 60_000 - since) < 60_000, `start_after ${new Date(since).toISOString()}`);
      await eventually(async () => assert.equal(await page.locator('.empty').count(), 1));
      assert.match(page.url(), /[?&]range=15m(&|$)/);
      // A shared link opens with its range chosen; "All time" shows the trace again.
      await page.goto(`${explorer}/ui/traces?range=24h`);
      assert.equal(await page.getByLabel('Time range').inputValue(), '24h');
      await eventually(async () => assert.equal(await page.locator('.empty').count(), 1));
      await page.getByLabel('Time range').selectOption({ label: 'All time' });
      await eventually(async () => assert.equal(await link.count(), 1));
      assert.doesNotMatch(page.url(), /range=/);
      await page.goto(`${explorer}/ui/traces`);

      await page.getByRole('link', { name: 'weather agent' }).click();
      await eventually(async () => assert.equal(await page.locator('.wf-row').count(), 3));
      assert.equal(new URL(page.url()).pathname, `/ui/traces/${TRACE_UUID}`);
      assert.equal(await page.locator('.wf-row.failed').count(), 1);
      // The trace's runs as a file.
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download JSON' }).click();
      assert.equal((await download).suggestedFilename(), `trace-${TRACE_UUID}.json`);
      assert.match(await page.locator('.wf-row.failed').innerText(), /execute_tool get_weather/);

      // Keyboard: the next run with the arrow key, and the URL names it.
      await page.locator('.wf-row').first().focus();
      await page.keyboard.press('ArrowDown');
      await eventually(async () => assert.match(page.url(), /\?run=/));
      const panel = page.getByTestId('run-panel');
      await eventually(async () => assert.match(await panel.innerText(), /chat gpt-4o-mini/));
      assert.match(await panel.locator('.chat-message[data-role="user"]').innerText(), /Weather in Paris\?/);
      const call = panel.getByTestId('tool-call');
      assert.match(await call.innerText(), /get_weather/);
      assert.match(await call.innerText(), /"city": "Paris"/);
      assert.match(await panel.getByTestId('run-tokens').innerText(), /1200 \(1000 in, 200 out\)/);
      assert.equal(await panel.getByTestId('run-usage-counted').innerText(), 'Counted');
      await panel.getByText('Raw JSON').click();
      assert.match(await panel.getByTestId('run-json').innerText(), /"run_type": "llm"/);
      await page.screenshot({ path: join(OUTPUT, 'explorer-trace.png'), fullPage: true });

      // A deep link to a run opens it directly.
      const runUrl = page.url();
      const fresh = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await fresh.goto(runUrl);
      await eventually(async () => assert.match(await fresh.getByTestId('run-panel').innerText(), /chat gpt-4o-mini/));
      await fresh.screenshot({ path: join(OUTPUT, 'explorer-trace-phone.png'), fullPage: true });
      const apiRuns = (
        (await (await fetch(`${explorer}/api/traces/${TRACE_UUID}`)).json()) as { runs: { id: string }[] }
      ).runs;
      const rootRunId = apiRuns[0]!.id;
      await fresh.goto(
        `${explorer}/ui/traces/${TRACE_UUID}?run=${encodeURIComponent(
          ((await (await fetch(`${explorer}/api/traces/${TRACE_UUID}`)).json()) as { runs: { id: string }[] }).runs[2]!
            .id,
        )}`,
      );
      await eventually(async () =>
        assert.match(await fresh.getByTestId('run-panel').innerText(), /weather service unavailable/),
      );
      assert.equal(await fresh.getByTestId('run-usage-counted').count(), 0, 'a run without usage');
      // The agent run shows the usage it reported, and that the trace's totals count it on the model call.
      await fresh.goto(`${explorer}/ui/traces/${TRACE_UUID}?run=${encodeURIComponent(rootRunId)}`);
      const rootPanel = fresh.getByTestId('run-panel');
      await eventually(async () => assert.match(await rootPanel.innerText(), /weather agent/));
      assert.match(await rootPanel.getByTestId('run-tokens').innerText(), /1200 \(1000 in, 200 out\)/);
      assert.match(await rootPanel.getByTestId('run-usage-counted').innerText(), /^Not counted/);
      await fresh.screenshot({ path: join(OUTPUT, 'explorer-run-usage-not-counted.png'), fullPage: true });
      await fresh.close();
    });

    it('links the trace of an agent server run back to its thread in the studio, and no other trace', async () => {
      const viewer = service.host.getExtensions().get('trace_explorer');
      assert.ok(isStudioLinkTarget(viewer));
      const config = async () => (await (await fetch(`${explorer}/api/config`)).json()) as { studio_url: unknown };
      assert.deepEqual(await config(), { studio_url: null });
      const studio = 'http://studio.test:8123/ui/';
      viewer.linkStudio(studio);
      try {
        assert.deepEqual(await config(), { studio_url: studio });
        // A trace without agent metadata: no link (once the page has read where the studio is).
        const configRead = page.waitForResponse((r) => r.url() === `${explorer}/api/config`);
        await page.goto(`${explorer}/ui/traces/${TRACE_UUID}`);
        await configRead;
        await eventually(async () => assert.equal(await page.locator('.wf-row').count(), 3));
        assert.equal(await page.getByRole('link', { name: 'Open in studio' }).count(), 0);

        // The root span of an agent server run names its thread and assistant.
        const runId = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
        const traceHex = runId.replace(/-/g, '');
        const body = otlpBody();
        const [root] = body.resourceSpans[0]!.scopeSpans[0]!.spans;
        body.resourceSpans[0]!.scopeSpans[0]!.spans = [
          {
            ...root!,
            traceId: traceHex,
            name: 'agent',
            attributes: [
              str('gen_ai.operation.name', 'invoke_agent'),
              str('langsmith.metadata.thread_id', 'thread-1'),
              str('langsmith.metadata.assistant_id', 'assistant-1'),
              str('langsmith.metadata.graph_id', 'agent'),
              str('langsmith.metadata.run_id', runId),
            ],
          },
        ];
        const posted = await fetch(otlp, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        assert.equal(posted.status, 200);
        await eventually(async () => assert.equal((await fetch(`${explorer}/api/traces/${runId}`)).status, 200));
        await page.goto(`${explorer}/ui/traces/${runId}`);
        const link = page.getByRole('link', { name: 'Open in studio' });
        await link.waitFor();
        assert.equal(await link.getAttribute('href'), `${studio}#/studio/assistant-1/thread-1`);
        await page.screenshot({ path: join(OUTPUT, 'explorer-trace-studio-link.png'), fullPage: true });
      } finally {
        viewer.linkStudio(undefined);
      }
    });

    it('opens a trace whose link carries its id as 32 hex digits', async () => {
      await page.goto(`${explorer}/ui/traces/${TRACE_HEX}`);
      await eventually(async () => assert.equal(await page.locator('.wf-row').count(), 3));
      assert.match(await page.locator('#trace-title').innerText(), /weather agent/);
    });

    it('keeps what someone types in the search box while the list refreshes itself', async () => {
      await page.goto(`${explorer}/ui/traces`);
      await page.getByRole('link', { name: 'weather agent' }).waitFor();
      await page.getByLabel('Search').fill('weath');
      // Two of the list's live refreshes after the typing, without submitting the search.
      for (let refresh = 0; refresh < 2; refresh++) {
        await page.waitForResponse((response) => new URL(response.url()).pathname === '/api/traces');
      }
      assert.equal(await page.getByLabel('Search').inputValue(), 'weath');
      await page.getByRole('button', { name: 'Search' }).click();
      await eventually(async () => assert.match(page.url(), /q=weath/));
      assert.equal(await page.getByRole('link', { name: 'weather agent' }).count(), 1);
    });
  });
});

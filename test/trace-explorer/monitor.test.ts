// The monitoring page in Debian's Chromium over a real pipeline (otlp receiver → genai → batch →
// local exporter, the explorer on the same store): traces sent over OTLP/HTTP in the last hour,
// six of them in one minute (a spike) and one twenty minutes earlier, are drawn as charts, and a
// click on the spike opens the list of exactly those six traces.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Service } from 'tracepipe';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually, tempDir } from 'tracepipe/testing';
import { startService } from '../support/service.ts';
import { OUTPUT } from './support.ts';

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** A trace of one chat span named `name` at `startMs`, lasting `ms`. */
function span(index: number, name: string, startMs: number, ms: number) {
  return {
    traceId: hex(0xabc000 + index, 32),
    spanId: hex(0xdef000 + index, 16),
    name,
    kind: 1,
    startTimeUnixNano: String(BigInt(startMs) * 1_000_000n),
    endTimeUnixNano: String(BigInt(startMs + ms) * 1_000_000n),
    attributes: [
      str('gen_ai.operation.name', 'chat'),
      str('gen_ai.request.model', 'gpt-4o-mini'),
      int('gen_ai.usage.input_tokens', 150),
      int('gen_ai.usage.output_tokens', 34),
    ],
    status: { code: 1 },
  };
}

describe('the monitoring page', { skip: noChromium }, () => {
  const dir = tempDir('tracepipe-monitor-');
  let service: Service;
  let explorer: string;
  let browser: Browser;
  const pageErrors: string[] = [];
  const foreign: string[] = [];
  // Ten seconds into the minute twenty minutes ago: the spike's six traces share one bucket.
  const spikeMinute = Math.floor((Date.now() - 20 * 60_000) / 60_000) * 60_000;

  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const yaml = `
receivers: { otlp: { port: 0, require_api_key: false } }
processors: { genai: {}, batch: { flush_interval_ms: 50 } }
exporters: { local: { path: ${dir}/traces.db } }
extensions: { trace_explorer: { port: 0, path: ${dir}/traces.db } }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [otlp], processors: [genai, batch], exporters: [local] } }
`;
    const started = await startService(yaml, dir);
    service = started.service;
    const otlp = started.endpoint('otlp');
    explorer = started.endpoint('trace_explorer').replace(/\/ui\/traces$/, '');
    const spans = [
      span(0, 'before the spike', spikeMinute - 20 * 60_000 + 10_000, 300),
      ...Array.from({ length: 6 }, (_, i) => span(i + 1, `spike ${i + 1}`, spikeMinute + 10_000 + i * 1000, 2000)),
    ];
    const response = await fetch(otlp, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [{ resource: { attributes: [str('service.name', 'shop')] }, scopeSpans: [{ spans }] }],
      }),
    });
    assert.equal(response.status, 200);
    await eventually(async () => {
      const body = (await (await fetch(`${explorer}/api/traces`)).json()) as { traces: unknown[] };
      assert.equal(body.traces.length, 7);
    });
    browser = await launchChromium(chromium);
  });

  after(async () => {
    await browser?.close();
    await service?.shutdown();
    assert.deepEqual(pageErrors, [], 'the page threw');
    assert.deepEqual(foreign, [], 'the page must not reach other origins');
  });

  it('draws the charts of the sent traces, and a click on the spike opens those traces', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(explorer) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    const statsResponse = page.waitForResponse((r) => r.url().startsWith(`${explorer}/api/stats?`));
    await page.goto(`${explorer}/ui/monitor?range=1h&bucket=1m`);
    const stats = (await (await statsResponse).json()) as {
      times: string[];
      series: { traces: number[]; total_tokens: number[]; cost: number[] }[];
    };
    const spike = stats.times.findIndex((time) => Date.parse(time) === spikeMinute);
    assert.ok(spike >= 0, 'the spike has a bucket');
    assert.equal(stats.series[0]!.traces[spike], 6);
    assert.equal(
      stats.series[0]!.traces.reduce((a, b) => a + b, 0),
      7,
    );
    assert.equal(stats.series[0]!.total_tokens[spike], 6 * 184);
    // Priced from the table: gpt-4o-mini at $0.15 / $0.60 per million tokens.
    assert.ok(Math.abs(stats.series[0]!.cost[spike]! - (6 * (150 * 0.15 + 34 * 0.6)) / 1e6) < 1e-12);

    // Five charts drawn on canvases, with the totals and the price's source.
    await eventually(async () => assert.equal(await page.locator('.chart canvas').count(), 5));
    assert.match(await page.getByTestId('monitor-totals').innerText(), /Traces\s*7/);
    assert.match(await page.getByTestId('cost-sources').innerText(), /genai-prices [\d.]+: OpenAI gpt 4o mini/);
    // (A string: this file is typed without the DOM.)
    const drawn = await page.evaluate(`(() => {
      const canvas = document.querySelector('[data-testid="chart-traces"] canvas');
      return canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data.some((v) => v !== 0);
    })()`);
    assert.ok(drawn, 'the traces chart has pixels');
    await page.screenshot({ path: join(OUTPUT, 'explorer-monitor.png'), fullPage: true });

    // The spike's x: the time axis spans the first to the last bucket.
    const over = page.locator('[data-testid="chart-traces"] .u-over');
    const box = (await over.boundingBox())!;
    const first = Date.parse(stats.times[0]!);
    const last = Date.parse(stats.times.at(-1)!);
    const x = ((spikeMinute - first) / (last - first)) * box.width;
    await over.hover({ position: { x, y: box.height / 2 } });
    await over.click({ position: { x, y: box.height / 2 } });
    await eventually(async () => assert.equal(new URL(page.url()).pathname, '/ui/traces'));
    const url = new URL(page.url());
    assert.equal(Date.parse(url.searchParams.get('start_after')!), spikeMinute);
    assert.equal(Date.parse(url.searchParams.get('start_before')!), spikeMinute + 60_000);
    await eventually(async () => assert.equal(await page.locator('table.traces tbody tr').count(), 6));
    const names = await page.locator('table.traces tbody tr td:first-child a').allInnerTexts();
    assert.deepEqual(names.sort(), ['spike 1', 'spike 2', 'spike 3', 'spike 4', 'spike 5', 'spike 6']);
    await page.close();
  });
});

// `/metrics` on the agent port (the process's Prometheus registry, as every receiver port serves
// it) and the interactive API reference at `/docs`: HTML whose every asset comes from this server,
// over the same OpenAPI document as `/openapi.json`.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually } from 'tracepipe/testing';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

describe('agent_api /metrics and /docs', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });

  it('serves the Prometheus registry at /metrics, with the agent metrics once a run ended', async () => {
    const thread = await server.client.threads.create();
    await server.client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'count me' }] },
    });
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /^# HELP tracepipe_/m);
    assert.match(text, /^tracepipe_agent_runs_total\{component_id="agent_api",status="success"\} 1$/m);
    assert.match(text, /^# TYPE tracepipe_agent_webhook_failures_total counter$/m);
    // Not an API route: it is not in the OpenAPI document.
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.equal(openapi.paths['/metrics'], undefined);
  });

  it('serves an API reference at /docs whose assets all load from the server itself', async () => {
    for (const path of ['/docs', '/docs/']) {
      const page = await fetch(`${server.url}${path}`);
      assert.equal(page.status, 200, path);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      const csp = page.headers.get('content-security-policy')!;
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /https:|\*/, 'the policy allows no other origin');
      const html = await page.text();
      assert.doesNotMatch(html, /(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i, 'no external URL in the HTML');
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
      assert.ok(
        assets.some((asset) => asset.endsWith('swagger-ui-bundle.js')),
        assets.join(', '),
      );
      assert.ok(
        assets.some((asset) => asset.endsWith('.css')),
        assets.join(', '),
      );
      for (const asset of assets) {
        const url = new URL(asset, `${server.url}${path}`);
        assert.equal(url.origin, server.url, asset);
        const response = await fetch(url);
        assert.equal(response.status, 200, `${path} → ${url.pathname}`);
        await response.arrayBuffer();
      }
    }
    // The page's script points Swagger UI at a document on this server, the same as /openapi.json.
    const initializer = await (await fetch(`${server.url}/docs/static/swagger-initializer.js`)).text();
    assert.match(initializer, /resolveUrl\('\.\/json'\)/);
    assert.doesNotMatch(initializer.replace(/^\s*\/\/.*$/gm, ''), /https?:\/\//, 'no URL outside comments');
    const fromDocs = await (await fetch(`${server.url}/docs/json`)).json();
    const openapi = await (await fetch(`${server.url}/openapi.json`)).json();
    assert.deepEqual(fromDocs, openapi);
    assert.ok((openapi as { paths: Record<string, unknown> }).paths['/threads/{thread_id}/runs/stream']);
  });

  it(
    'renders /docs in a browser under its Content-Security-Policy, reaching no other origin, and tries a route',
    { skip: noChromium },
    async () => {
      const browser = await launchChromium(chromium);
      const problems: string[] = [];
      const foreign: string[] = [];
      try {
        const page = await browser.newPage();
        page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(`console: ${message.text()}`);
        });
        page.on('request', (request) => {
          if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) foreign.push(request.url());
        });
        await page.goto(`${server.url}/docs`);
        await eventually(async () => (await page.locator('.opblock').count()) > 20, {
          message: 'the operations are listed',
        });
        const ok = page.locator('#operations-default-get_ok');
        await ok.locator('.opblock-summary').click();
        await ok.getByRole('button', { name: 'Try it out' }).click();
        await ok.getByRole('button', { name: 'Execute' }).click();
        await eventually(
          async () => (await ok.locator('.live-responses-table tbody .response-col_status').count()) > 0,
          { message: 'the response is shown' },
        );
        assert.match(await ok.locator('.live-responses-table tbody .response-col_status').first().innerText(), /200/);
      } finally {
        await browser.close();
      }
      assert.deepEqual(problems, []);
      assert.deepEqual(foreign, []);
    },
  );
});

// How the web interface is served, without a browser: the prefix rules, the redirect from `/`
// (only when nothing else answers it), the vendored browser modules and nothing else from
// node_modules, the security headers (the import map's hash in the CSP), and the `ui` config keys
// on a real agent server.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { normalizePrefix, registerUi, traceLinkBase } from './internal/ui/register.ts';
import { startTestServer } from './testing/test-server.ts';

describe('agent_api web interface serving', () => {
  it('normalizes the prefix', () => {
    assert.equal(normalizePrefix('/ui'), '/ui');
    assert.equal(normalizePrefix('/ui/'), '/ui');
    assert.equal(normalizePrefix('ui'), '/ui');
    assert.equal(normalizePrefix('/tools/console//'), '/tools/console');
    assert.equal(normalizePrefix('/'), '');
  });

  it('builds the base of trace links from ui.trace_explorer_url', () => {
    assert.equal(traceLinkBase(''), '');
    assert.equal(traceLinkBase(undefined), '');
    assert.equal(traceLinkBase('http://127.0.0.1:4319'), 'http://127.0.0.1:4319/ui/traces');
    assert.equal(traceLinkBase('http://127.0.0.1:4319/'), 'http://127.0.0.1:4319/ui/traces');
    assert.equal(
      traceLinkBase('https://traces.example.com/explorer/ui/traces/'),
      'https://traces.example.com/explorer/ui/traces',
    );
  });

  it('serves the page, its modules and the vendored libraries with security headers', async () => {
    const app = Fastify();
    await registerUi(app, { prefix: '/ui/' });
    try {
      const page = await app.inject({ method: 'GET', url: '/ui/' });
      assert.equal(page.statusCode, 200);
      assert.match(page.headers['content-type'] as string, /^text\/html/);
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.headers['cache-control'], 'no-cache');
      // The only inline script, the import map, is allowed by its hash and nothing else is.
      const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page.body)![1];
      const hash = createHash('sha256').update(importMap).digest('base64');
      const csp = page.headers['content-security-policy'] as string;
      assert.match(csp, new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, '\\$&')}'`));
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      for (const mapped of Object.values(JSON.parse(importMap).imports as Record<string, string>)) {
        // A prefix entry (the modules shared with the trace explorer) maps a folder: one of its modules.
        const target = mapped.endsWith('/') ? `${mapped}messages.js` : mapped;
        const module = await app.inject({ method: 'GET', url: new URL(target, 'http://x/ui/').pathname });
        assert.equal(module.statusCode, 200, target);
        assert.match(module.headers['content-type'] as string, /^text\/javascript/);
      }

      // Vendored modules are revalidated by ETag.
      const preact = await app.inject({ method: 'GET', url: '/ui/vendor/preact.mjs' });
      assert.equal(preact.headers['cache-control'], 'no-cache');
      const etag = preact.headers.etag as string;
      assert.ok(etag);
      const again = await app.inject({
        method: 'GET',
        url: '/ui/vendor/preact.mjs',
        headers: { 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');

      // The graph drawing's layout library, without its source map comment.
      const dagre = await app.inject({ method: 'GET', url: '/ui/vendor/dagre.mjs' });
      assert.equal(dagre.statusCode, 200);
      assert.match(dagre.body, /export\s*\{/);
      assert.doesNotMatch(dagre.body, /sourceMappingURL/);

      const script = await app.inject({ method: 'GET', url: '/ui/js/main.js' });
      assert.equal(script.statusCode, 200);
      assert.match(script.headers['content-type'] as string, /javascript/);
      assert.equal((await app.inject({ method: 'GET', url: '/ui/app.css' })).statusCode, 200);

      for (const url of [
        '/ui/vendor/react.mjs',
        '/ui/vendor/../../../../package.json',
        '/ui/../register.ts',
        '/ui/%2e%2e/register.ts',
        '/ui/js/nope.js',
        '/ui/shared/../webui.ts',
        '/ui/js/html.js',
      ]) {
        assert.equal((await app.inject({ method: 'GET', url })).statusCode, 404, url);
      }

      const bare = await app.inject({ method: 'GET', url: '/ui' });
      assert.equal(bare.statusCode, 302);
      assert.equal(bare.headers.location, '/ui/');
      const root = await app.inject({ method: 'GET', url: '/' });
      assert.equal(root.statusCode, 302);
      assert.equal(root.headers.location, '/ui/');
    } finally {
      await app.close();
    }
  });

  it('leaves `/` alone when another route answers it', async () => {
    const app = Fastify();
    app.get('/', async () => ({ mine: true }));
    await registerUi(app, { prefix: '/ui' });
    try {
      assert.deepEqual((await app.inject({ method: 'GET', url: '/' })).json(), { mine: true });
      assert.equal((await app.inject({ method: 'GET', url: '/ui/' })).statusCode, 200);
    } finally {
      await app.close();
    }
  });

  it('follows the `ui` config keys of the agent server: another path, or no interface at all', async () => {
    const moved = await startTestServer({ ui: { enabled: true, path: '/console', trace_explorer_url: '' } });
    try {
      assert.equal((await fetch(`${moved.url}/console/`)).status, 200);
      assert.equal((await fetch(`${moved.url}/ui/`)).status, 404);
      const root = await fetch(`${moved.url}/`, { redirect: 'manual' });
      assert.equal(root.headers.get('location'), '/console/');
      // No trace explorer configured: the page gets no trace links.
      assert.deepEqual(await (await fetch(`${moved.url}/console/config.json`)).json(), { trace_explorer_url: null });
      // The API is unaffected and keeps its own headers (no page CSP on API answers).
      const info = await fetch(`${moved.url}/info`);
      assert.equal(info.status, 200);
      assert.equal(info.headers.get('content-security-policy'), null);
    } finally {
      await moved.stop();
    }

    const linked = await startTestServer({
      ui: { enabled: true, path: '/ui', trace_explorer_url: 'http://127.0.0.1:4319/ui/traces/' },
    });
    try {
      const config = await fetch(`${linked.url}/ui/config.json`);
      assert.equal(config.status, 200);
      assert.deepEqual(await config.json(), { trace_explorer_url: 'http://127.0.0.1:4319/ui/traces' });
    } finally {
      await linked.stop();
    }

    const off = await startTestServer({ ui: { enabled: false, path: '/ui', trace_explorer_url: '' } });
    try {
      assert.equal((await fetch(`${off.url}/ui/`)).status, 404);
      const root = await fetch(`${off.url}/`, { redirect: 'manual' });
      assert.equal(root.status, 404);
      assert.equal((await fetch(`${off.url}/ok`)).status, 200);
    } finally {
      await off.stop();
    }
  });
});

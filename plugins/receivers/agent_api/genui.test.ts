// Generative UI (langgraph.json `ui`): the components bundled at start, the HTML that loads them
// (`POST /ui/{name}`, what the SDK's `client["~ui"].getComponent` fetches), and the bundle itself
// run as a browser runs it, against the module table and store of `LoadExternalComponent`.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const GENUI_LANGGRAPH_JSON = fileURLToPath(new URL('./testing/graphs/genui/langgraph.json', import.meta.url));

describe('agent_api generative UI', () => {
  let server: TestServer;
  useTestServer((started) => (server = started), { langgraph_config: GENUI_LANGGRAPH_JSON });

  it('answers the HTML that loads a component, as the SDK asks for it', async () => {
    const html = await (
      server.client as unknown as { '~ui': { getComponent(ui: string, name: string): Promise<string> } }
    )['~ui'].getComponent('cards', 'weather-card');
    assert.equal(
      html,
      [
        `<link rel="stylesheet" href="${server.url}/ui/cards/entrypoint.css" />`,
        `<script src="${server.url}/ui/cards/entrypoint.js" onload='__LGUI_cards.render("weather-card", "{{shadowRootId}}")'></script>`,
      ].join('\n'),
    );
    const css = await fetch(`${server.url}/ui/cards/entrypoint.css`);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    assert.match(await css.text(), /\.weather-card/);
  });

  it("renders through the page's store with the page's React", async () => {
    const script = await fetch(`${server.url}/ui/cards/entrypoint.js`);
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
    const code = await script.text();
    assert.ok(code.includes('globalThis[Symbol.for("LGUI_REQUIRE")]'), 'takes React from the page');

    // What LoadExternalComponent's page provides: the module table, the store, the shadow root.
    const mounts: unknown[] = [];
    const shadowRoot = { appendChild: (node: unknown) => mounts.push(node) };
    const responded: { id: string; component: (props: object) => unknown; target: unknown }[] = [];
    const jsx = (type: string, props: object) => ({ type, props });
    const context: Record<PropertyKey, unknown> = {
      document: {
        getElementById: (id: string) => (id === 'root-1' ? { shadowRoot } : null),
        createElement: (tag: string) => ({ tag }),
      },
    };
    context.window = context;
    context.globalThis = context;
    context[Symbol.for('LGUI_REQUIRE')] = (name: string) => {
      if (name === 'react/jsx-runtime') return { jsx, jsxs: jsx };
      throw new Error(`no module ${name}`);
    };
    context[Symbol.for('LGUI_EXT_STORE')] = {
      respond: (id: string, component: (props: object) => unknown, target: unknown) =>
        responded.push({ id, component, target }),
    };
    runInNewContext(`${code}\n__LGUI_cards.render("weather-card", "root-1")`, context);

    assert.equal(responded.length, 1);
    assert.equal(responded[0]?.id, 'root-1');
    assert.deepEqual(mounts, [responded[0]?.target]);
    // (Through JSON: the props object comes from the script's realm.)
    assert.deepEqual(JSON.parse(JSON.stringify(responded[0]?.component({ city: 'Paris' }))), {
      type: 'div',
      props: { className: 'weather-card', children: 'Weather in Paris' },
    });
  });

  it('refuses an unknown UI, a missing component name and an unknown file', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post('/ui/nothing', { name: 'weather-card' })).status, 404);
    assert.equal((await post('/ui/cards', {})).status, 422);
    assert.equal((await fetch(`${server.url}/ui/cards/other.js`)).status, 404);
    // The web interface at /ui is still there.
    assert.equal((await fetch(`${server.url}/ui/`)).status, 200);
  });
});

describe('agent_api generative UI behind API keys', () => {
  it('wants the key for the HTML, not for the files a <script src> loads', async () => {
    const server = await startTestServer({
      langgraph_config: GENUI_LANGGRAPH_JSON,
      auth: { api_keys: 'ui-key' },
    } as Parameters<typeof startTestServer>[0]);
    try {
      const ask = (headers: Record<string, string>) =>
        fetch(`${server.url}/ui/cards`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ name: 'weather-card' }),
        });
      assert.equal((await ask({})).status, 401);
      assert.equal((await ask({ 'x-api-key': 'ui-key' })).status, 200);
      assert.equal((await fetch(`${server.url}/ui/cards/entrypoint.js`)).status, 200);
    } finally {
      await server.stop();
    }
  });
});

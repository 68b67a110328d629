// Serves the agent server's web interface: the static single-page app under `<prefix>/`, the
// browser modules it imports (Preact, its hooks, htm and the modules shared with the trace explorer,
// served as every web interface serves them by src/http/webui.ts, plus dagre for the graph
// drawing), `<prefix>/config.json` (settings of the page itself, such as where run traces are
// shown), and a redirect from `/` when no other route owns it. Everything else the app reads comes
// from the public HTTP API of the same server.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { contentSecurityPolicy, registerBrowserModules, securityHeaders } from 'tracepipe/webui';

export interface UiOptions {
  /** URL path of the interface, e.g. `/ui` (a trailing slash is ignored). */
  readonly prefix: string;
  /** The trace list of a trace explorer; the studio links each run's trace under it. Empty: no links. */
  readonly traceExplorerUrl?: string;
}

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

// The graph drawing's layout (a self-contained ES module build), beside the modules every web
// interface gets.
const VENDOR_MODULES: Readonly<Record<string, string>> = { 'dagre.mjs': '@dagrejs/dagre' };

/**
 * The base of the studio's trace links: the configured URL without a trailing slash; a bare origin
 * (`http://host:4319`) gets the explorer's default page, `/ui/traces`. Empty when not configured.
 */
export function traceLinkBase(url: string | undefined): string {
  const trimmed = (url ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  try {
    return new URL(trimmed).pathname === '/' ? `${trimmed}/ui/traces` : trimmed;
  } catch {
    return trimmed;
  }
}

/** `/ui/` → `/ui`; `ui` → `/ui`; `/` stays `` (the interface at the root). */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.trim().replace(/\/+$/, '');
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/** Registers the interface in its own encapsulated context (nothing leaks to sibling routes). */
export async function registerUi(app: FastifyInstance, options: UiOptions): Promise<void> {
  const prefix = normalizePrefix(options.prefix);
  const csp = contentSecurityPolicy(readFileSync(`${STATIC_DIR}index.html`, 'utf8'));
  const pageConfig = JSON.stringify({ trace_explorer_url: traceLinkBase(options.traceExplorerUrl) || null });
  // `/` leads to the interface unless another part of the server answers it.
  const redirectRoot = prefix !== '' && !app.hasRoute({ method: 'GET', url: '/' });

  await app.register(async (ui) => {
    ui.addHook('onSend', async (_request, reply, payload) => {
      securityHeaders(reply, csp);
      return payload;
    });

    await registerBrowserModules(ui, prefix, VENDOR_MODULES);

    // The page's own settings; public like the static files (they hold no data).
    ui.get(`${prefix}/config.json`, { schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(pageConfig),
    );

    await ui.register(fastifyStatic, {
      root: STATIC_DIR,
      prefix: `${prefix}/`,
      // `/ui` → `/ui/`, so the page's relative URLs (modules, import map) resolve under the prefix.
      redirect: true,
      index: 'index.html',
      decorateReply: false,
      // Revalidate on every load: a new release must not run against a stale cached module.
      cacheControl: false,
      setHeaders: (reply) => {
        reply.header('cache-control', 'no-cache');
      },
    });

    if (prefix !== '')
      ui.get(prefix, { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${prefix}/`));
    if (redirectRoot) ui.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${prefix}/`));
  });
}

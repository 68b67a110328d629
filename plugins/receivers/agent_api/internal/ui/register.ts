// Serves the agent server's web interface: the static single-page app under `<prefix>/`, the
// browser modules it imports (Preact, its hooks, htm, dagre for the graph drawing) straight from
// node_modules, `<prefix>/config.json` (settings of the page itself, such as where run traces are
// shown), and a redirect from `/` when no other route owns it. Everything else the app reads comes
// from the public HTTP API of the same server.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

export interface UiOptions {
  /** URL path of the interface, e.g. `/ui` (a trailing slash is ignored). */
  readonly prefix: string;
  /** The trace list of a trace explorer; the studio links each run's trace under it. Empty: no links. */
  readonly traceExplorerUrl?: string;
}

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

// Served by name only: nothing else from node_modules is reachable.
const VENDOR_MODULES: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact',
  'preact-hooks.mjs': 'preact/hooks',
  'htm.mjs': 'htm',
  // The graph drawing's layout (a self-contained ES module build).
  'dagre.mjs': '@dagrejs/dagre',
};

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

/**
 * The Content-Security-Policy of the interface: same-origin everything, no inline code except
 * the import map of `index.html`, which is allowed by its hash (browsers have no external form
 * of import maps).
 */
export function contentSecurityPolicy(indexHtml: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(indexHtml)?.[1];
  const mapSource =
    importMap === undefined ? '' : ` 'sha256-${createHash('sha256').update(importMap).digest('base64')}'`;
  return [
    "default-src 'self'",
    `script-src 'self'${mapSource}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function securityHeaders(reply: FastifyReply, csp: string): void {
  reply.header('content-security-policy', csp);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}

/** Registers the interface in its own encapsulated context (nothing leaks to sibling routes). */
export async function registerUi(app: FastifyInstance, options: UiOptions): Promise<void> {
  const prefix = normalizePrefix(options.prefix);
  const csp = contentSecurityPolicy(readFileSync(`${STATIC_DIR}index.html`, 'utf8'));
  const vendor = new Map(
    Object.entries(VENDOR_MODULES).map(([name, specifier]) => [
      name,
      // Source maps are not served, so the comment naming one goes.
      readFileSync(fileURLToPath(import.meta.resolve(specifier)), 'utf8').replace(
        /\n\/\/# sourceMappingURL=\S+\s*$/,
        '\n',
      ),
    ]),
  );
  const pageConfig = JSON.stringify({ trace_explorer_url: traceLinkBase(options.traceExplorerUrl) || null });
  // `/` leads to the interface unless another part of the server answers it.
  const redirectRoot = prefix !== '' && !app.hasRoute({ method: 'GET', url: '/' });

  await app.register(async (ui) => {
    ui.addHook('onSend', async (_request, reply, payload) => {
      securityHeaders(reply, csp);
      return payload;
    });

    for (const [name, source] of vendor) {
      // The URL does not change when the package is upgraded, so browsers revalidate; the ETag
      // makes that a 304 while the content is the same.
      const etag = `"${createHash('sha256').update(source).digest('base64url')}"`;
      ui.get(`${prefix}/vendor/${name}`, { schema: { hide: true } }, async (request, reply) => {
        reply.header('cache-control', 'no-cache').header('etag', etag);
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return reply.type('text/javascript; charset=utf-8').send(source);
      });
    }

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

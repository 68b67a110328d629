// What every component with a web interface serves the same way (the agent server's console, the
// trace explorer): the browser builds of Preact, its hooks and htm straight from node_modules (no
// CDN, no build step), the browser modules the interfaces share (src/http/webui/: htm bound to
// Preact, message rendering), and the Content-Security-Policy that allows only same-origin code
// plus the page's import map.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The shared browser modules, imported by the pages as `@tracepipe/webui/<file>.js`. */
export const SHARED_UI_DIR = fileURLToPath(new URL('./webui/', import.meta.url));

// Served by name only: nothing else from node_modules is reachable.
const VENDOR_MODULES: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact',
  'preact-hooks.mjs': 'preact/hooks',
  'htm.mjs': 'htm',
};

/**
 * The Content-Security-Policy of a page: same-origin everything, no inline code except the
 * import map of its HTML, which is allowed by its hash (browsers have no external import maps).
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

/** The headers every response of a web interface carries. */
export function securityHeaders(reply: FastifyReply, csp: string): void {
  reply.header('content-security-policy', csp);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}

/**
 * Serves `<prefix>/vendor/{preact,preact-hooks,htm}.mjs` (plus the interface's own `extraVendor`
 * modules: file name → package specifier, each a self-contained ES module build) and the shared
 * modules under `<prefix>/shared/`, revalidated on every load (an upgrade must not run against
 * stale modules). Register it inside the interface's own encapsulated context.
 */
export async function registerBrowserModules(
  app: FastifyInstance,
  prefix: string,
  extraVendor: Readonly<Record<string, string>> = {},
): Promise<void> {
  for (const [name, specifier] of Object.entries({ ...VENDOR_MODULES, ...extraVendor })) {
    // Source maps are not served, so the comment naming one goes.
    const source = readFileSync(fileURLToPath(import.meta.resolve(specifier)), 'utf8').replace(
      /\n\/\/# sourceMappingURL=\S+\s*$/,
      '\n',
    );
    // The URL does not change when the package is upgraded, so browsers revalidate; the ETag
    // makes that a 304 while the content is the same.
    const etag = `"${createHash('sha256').update(source).digest('base64url')}"`;
    app.get(`${prefix}/vendor/${name}`, { schema: { hide: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-cache').header('etag', etag);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('text/javascript; charset=utf-8').send(source);
    });
  }
  await app.register(fastifyStatic, {
    root: SHARED_UI_DIR,
    prefix: `${prefix}/shared/`,
    decorateReply: false,
    cacheControl: false,
    allowedPath: (path) => path.endsWith('.js'),
    setHeaders: (reply) => {
      // The type the vendored modules have (HTML's name for JavaScript).
      reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache');
    },
  });
}

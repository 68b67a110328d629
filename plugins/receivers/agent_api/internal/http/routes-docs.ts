// `GET /metrics` — the process's Prometheus registry, as every HTTP receiver's port serves it —
// and `GET /docs`, an interactive API reference: Swagger UI (`@fastify/swagger-ui`) over the
// OpenAPI document that `/openapi.json` serves, generated from the routes' own schemas. Every
// asset of the page comes from this server (`/docs/static/…`, the logo as a data: URI); nothing
// is loaded from a CDN, and the page's Content-Security-Policy allows nothing else.
//
// Both are registered inside the API's plugin, so the API's request hooks (authentication)
// apply to them as to every other route.

import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { registerMetricsRoute } from 'tracepipe/confighttp';
import type { AgentServices } from './services.ts';

export const DOCS_PATH = '/docs';

const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  // Swagger UI sets inline styles as it renders (its syntax highlighter among others); styles
  // cannot run code, and scripts stay limited to this server's own files.
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/** Must run after `@fastify/swagger` is registered in the same context. */
export async function registerDocsAndMetrics(app: FastifyInstance, services: AgentServices): Promise<void> {
  registerMetricsRoute(app, services.metrics, '/metrics');
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: DOCS_CSP,
    // No "valid" badge: Swagger UI would fetch it from validator.swagger.io.
    validatorUrl: false,
    theme: { title: 'tracepipe Agent Deployment API' },
    uiConfig: { deepLinking: true },
  });
}

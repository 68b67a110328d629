// The `trace_explorer` extension: an HTTP listener of its own serving a query API over the local
// trace store (`/api/traces`, `/api/traces/{trace_id}`, `/api/projects`, described by
// `/openapi.json`) and the explorer's web pages (`/ui/traces`, `/ui/traces/{trace_id}?run=…`).
// It opens the store file itself, so it works whether this process's `local` exporter writes it,
// another process does, or nothing writes it any more. Other components find it through
// `Host.getExtensions()` (it is a `TraceViewer`) to link to its pages; the agent server tells it
// where its studio is (`linkStudio()`), and the pages read that from `/api/config` to link an agent
// run's trace back to its thread in the studio.

import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { splitList } from '../../../src/http/cors.ts';
import { createHttpServer, listen, listenerUrl } from '../../../src/http/server.ts';
import { contentSecurityPolicy, registerBrowserModules, securityHeaders } from '../../../src/http/webui.ts';
import type {
  ComponentDescription,
  ComponentSettings,
  Extension,
  TraceViewer,
} from '../../../src/pipeline/component.ts';
import { InvalidCursorError, InvalidTimeError, LocalTraceStore } from '../../exporters/local/store.ts';
import type { TraceExplorerConfig } from './config.ts';
import { QueryError, parseTraceQuery, traceBody, tracePage } from './internal/api.ts';

const STATIC_DIR = fileURLToPath(new URL('./internal/static/', import.meta.url));
const OPENAPI = fileURLToPath(new URL('./openapi.json', import.meta.url));
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export class TraceExplorer implements Extension, TraceViewer {
  private app?: FastifyInstance;
  private store?: LocalTraceStore;
  private baseUrl?: string;
  private studioUrl?: string;
  private readonly path: string;
  private stopped = false;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: TraceExplorerConfig,
  ) {
    this.path = config.path === ':memory:' ? config.path : settings.host.resolvePath(config.path);
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.stopped || this.app) return;
    if (this.path !== ':memory:') await mkdir(dirname(this.path), { recursive: true });
    this.store = new LocalTraceStore(this.path);
    const app = createHttpServer({
      logger: this.settings.telemetry.logger,
      host: this.settings.host,
      bodyLimit: 64 * 1024,
      metricsPath: false,
    });
    this.app = app;
    this.guardHost(app);
    this.registerApi(app);
    await this.registerUi(app);
    const port = await listen(app, this.config.host, this.config.port);
    this.baseUrl = listenerUrl(this.config.host, port, '').replace(/\/$/, '');
    this.settings.telemetry.logger.info({ url: this.traceListUrl(), store: this.path }, 'Trace explorer listening.');
  }

  describe(): ComponentDescription {
    if (!this.baseUrl) return {};
    return {
      endpoints: [
        { url: `${this.baseUrl}/ui/traces`, purpose: 'Trace explorer' },
        { url: `${this.baseUrl}/api/traces`, purpose: 'Trace query API' },
      ],
      details: { 'trace explorer store': this.path },
    };
  }

  traceListUrl(): string | undefined {
    return this.baseUrl && `${this.baseUrl}/ui/traces`;
  }

  traceUrl(traceId: string, runId?: string): string | undefined {
    if (!this.baseUrl) return undefined;
    const run = runId ? `?run=${encodeURIComponent(runId)}` : '';
    return `${this.baseUrl}/ui/traces/${encodeURIComponent(traceId)}${run}`;
  }

  linkStudio(studioUrl: string | undefined): void {
    this.studioUrl = studioUrl || undefined;
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    await this.app?.close();
    this.app = undefined;
    this.store?.close();
    this.store = undefined;
  }

  /** On loopback, only loopback Host names (and the configured ones): no DNS rebinding. */
  private guardHost(app: FastifyInstance): void {
    if (!LOOPBACK.has(this.config.host)) return;
    const allowed = new Set([...LOOPBACK, ...splitList(this.config.allowed_hosts).map((h) => h.toLowerCase())]);
    app.addHook('onRequest', async (request, reply) => {
      const header = (request.headers.host ?? '').toLowerCase();
      const name = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0]!;
      if (allowed.has(name)) return;
      return reply.code(403).send({
        statusCode: 403,
        error: 'Forbidden',
        code: 'TP_ERR_API_HOST_NOT_ALLOWED',
        message: `Host ${JSON.stringify(header)} is not allowed; add it to allowed_hosts`,
      });
    });
  }

  private requireStore(): LocalTraceStore {
    if (!this.store) throw new Error('the trace explorer is not running');
    return this.store;
  }

  private registerApi(app: FastifyInstance): void {
    const openapi = readFileSync(OPENAPI, 'utf8');
    app.get('/openapi.json', async (_request, reply) => reply.type('application/json').send(openapi));
    // The pages' settings: where the studio of the agent server whose runs these are lives, if any.
    app.get('/api/config', async (_request, reply) =>
      reply.header('cache-control', 'no-cache').send({ studio_url: this.studioUrl ?? null }),
    );
    app.get('/api/projects', async () => ({ projects: this.requireStore().projects() }));
    app.get('/api/traces', async (request, reply) => {
      try {
        const query = parseTraceQuery(request.query as Record<string, string | string[] | undefined>);
        return tracePage(this.requireStore(), query, this.config.prices);
      } catch (error) {
        if (error instanceof QueryError || error instanceof InvalidCursorError || error instanceof InvalidTimeError) {
          const field =
            error instanceof QueryError ? error.field : error instanceof InvalidCursorError ? 'cursor' : undefined;
          return reply.code(422).send({
            statusCode: 422,
            error: 'Unprocessable Entity',
            code: 'TP_ERR_API_INVALID',
            message: field && !error.message.startsWith(field) ? `${field}: ${error.message}` : error.message,
            ...(field ? { field } : {}),
          });
        }
        throw error;
      }
    });
    app.get('/api/traces/:traceId', async (request, reply) => {
      const { traceId } = request.params as { traceId: string };
      const trace = this.requireStore().getTrace(traceId);
      if (!trace) {
        return reply.code(404).send({
          statusCode: 404,
          error: 'Not Found',
          code: 'TP_ERR_API_NOT_FOUND',
          message: `no trace ${traceId} in the store`,
        });
      }
      return traceBody(this.requireStore(), trace, this.config.prices);
    });
  }

  private async registerUi(app: FastifyInstance): Promise<void> {
    const indexHtml = readFileSync(`${STATIC_DIR}index.html`, 'utf8');
    const csp = contentSecurityPolicy(indexHtml);
    await app.register(async (ui) => {
      ui.addHook('onSend', async (_request, reply, payload) => {
        securityHeaders(reply, csp);
        return payload;
      });
      await registerBrowserModules(ui, '/ui');
      await ui.register(fastifyStatic, {
        root: STATIC_DIR,
        prefix: '/ui/static/',
        decorateReply: false,
        cacheControl: false,
        setHeaders: (reply) => {
          reply.header('cache-control', 'no-cache');
        },
      });
      // Every page is the same document; the page reads its route from the URL.
      const page = async (_request: unknown, reply: import('fastify').FastifyReply) =>
        reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml);
      ui.get('/ui/traces', page);
      ui.get('/ui/traces/:traceId', page);
      ui.get('/ui', async (_request, reply) => reply.redirect('/ui/traces'));
      ui.get('/ui/', async (_request, reply) => reply.redirect('/ui/traces'));
      ui.get('/', async (_request, reply) => reply.redirect('/ui/traces'));
    });
  }
}

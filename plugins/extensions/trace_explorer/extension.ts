// The `trace_explorer` extension: an HTTP listener of its own serving a query API over the local
// trace store (`/api/traces`, `/api/traces/{trace_id}`, `/api/projects`, described by
// `/openapi.json`) and the explorer's web pages (`/ui/traces`, `/ui/traces/{trace_id}?run=…`).
// It opens the store file itself, so it works whether this process's `local` exporter writes it,
// another process does, or nothing writes it any more. Other components find it through
// `Host.getExtensions()` (it is a `TraceViewer`) to link to its pages; the agent server tells it
// where its studio is (`linkStudio()`, the explorer's own `StudioLinkTarget`), and the pages read that from `/api/config` to link an agent
// run's trace back to its thread in the studio.

import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type {
  Run,
  ComponentDescription,
  ComponentSettings,
  Extension,
  TraceViewer,
  TraceViewerGuard,
} from 'tracepipe/plugin';
import { createGuardedServer, isLoopbackName, listen, listenerUrl } from 'tracepipe/confighttp';
import { contentSecurityPolicy, registerBrowserModules, securityHeaders } from 'tracepipe/webui';
import { InvalidCursorError, InvalidTimeError, LocalTraceStore } from 'tracepipe/tracestore';
import type { TraceExplorerConfig } from './config.ts';
import {
  ExplorerInvalidError,
  ExplorerMethodNotAllowedError,
  ExplorerNotFoundError,
  sendCodedError,
} from './errors.ts';
import {
  QueryError,
  parseThreadQuery,
  parseTraceQuery,
  threadDetail,
  threadPage,
  traceBody,
  tracePage,
} from './internal/api.ts';
import { parseStatsQuery, statsBody } from './internal/stats.ts';
import { Pricer } from './internal/pricing.ts';
import { ExplorerAccess } from './internal/access.ts';
import type { StudioLinkTarget } from './studio-link.ts';

const STATIC_DIR = fileURLToPath(new URL('./internal/static/', import.meta.url));
const OPENAPI = fileURLToPath(new URL('./openapi.json', import.meta.url));
const UPLOT_CSS = readFileSync(fileURLToPath(import.meta.resolve('uplot/dist/uPlot.min.css')), 'utf8');

export class TraceExplorer implements Extension, TraceViewer, StudioLinkTarget {
  private app?: FastifyInstance;
  private store?: LocalTraceStore;
  private baseUrl?: string;
  private studioUrl?: string;
  private readonly path: string;
  private readonly pricer: Pricer;
  private readonly access: ExplorerAccess;
  private backlogTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: TraceExplorerConfig,
  ) {
    this.path = config.path === ':memory:' ? config.path : settings.host.resolvePath(config.path);
    this.pricer = new Pricer(config.prices);
    this.access = new ExplorerAccess(!isLoopbackName(config.host), config.insecure);
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.stopped || this.app) return;
    this.access.checkStart(this.config.host);
    if (this.path !== ':memory:') await mkdir(dirname(this.path), { recursive: true });
    this.store = new LocalTraceStore(this.path);
    this.indexSearchBacklog();
    // On loopback, only loopback Host names and the configured ones: no DNS rebinding.
    const { app } = await createGuardedServer({
      logger: this.settings.telemetry.logger,
      host: this.settings.host,
      bodyLimit: 64 * 1024,
      metricsPath: false,
      listenHost: this.config.host,
      allowedHosts: this.config.allowed_hosts,
      tls: this.config.tls,
      methodNotAllowedCode: ExplorerMethodNotAllowedError.code,
    });
    this.app = app;
    this.access.register(app);
    this.registerApi(app);
    await this.registerUi(app);
    const port = await listen(app, this.config.host, this.config.port);
    this.baseUrl = listenerUrl(this.config.host, port, '', this.config.tls ? 'https' : 'http').replace(/\/$/, '');
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

  guardWith(owner: string): TraceViewerGuard {
    return this.access.guardWith(owner);
  }

  linkStudio(studioUrl: string | undefined): void {
    this.studioUrl = studioUrl || undefined;
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.backlogTimer);
    await this.app?.close();
    this.app = undefined;
    this.store?.close();
    this.store = undefined;
  }

  /**
   * Builds the search index of the runs a store of an older version holds, a step at a time
   * (each a short write transaction, so that the exporter writing the same file is not held up);
   * searches are correct meanwhile, only slower.
   */
  private indexSearchBacklog(): void {
    const step = () => {
      this.backlogTimer = undefined;
      if (!this.store || this.stopped) return;
      let left: number;
      try {
        left = this.store.indexSearchBacklog(2000);
      } catch (error) {
        // Busy with another writer past the timeout: try again later.
        this.settings.telemetry.logger.warn({ err: error }, 'Search index build paused.');
        left = 1;
      }
      if (left > 0) this.backlogTimer = setTimeout(step, 50);
      else this.settings.telemetry.logger.debug('Search index complete.');
    };
    step();
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
    type Query = Record<string, string | string[] | undefined>;
    app.get('/api/traces', async (request, reply) =>
      answer(reply, () => tracePage(this.requireStore(), parseTraceQuery(request.query as Query), this.pricer)),
    );
    app.get('/api/traces/:traceId', async (request, reply) => {
      const { traceId } = request.params as { traceId: string };
      const trace = this.requireStore().getTrace(traceId);
      if (!trace) return notFound(reply, `no trace ${traceId} in the store`);
      return traceBody(this.requireStore(), trace, this.pricer);
    });
    // Downloads in the run model the backend exporter uploads, as the body of a batch upload
    // (`{post: [runs]}`): a file another tracing backend can ingest.
    app.get('/api/traces/:traceId/export', async (request, reply) => {
      const { traceId } = request.params as { traceId: string };
      // Either id form is accepted; the file is named by the stored one.
      const stored = this.requireStore().getTrace(traceId)?.summary.traceId;
      if (!stored) return notFound(reply, `no trace ${traceId} in the store`);
      return download(reply, `trace-${stored}.json`, this.requireStore().exportRuns([stored]));
    });
    app.get('/api/export', async (request, reply) =>
      answer(reply, () => {
        // Without a limit, the most a page holds: a download is rarely meant to be the first 50.
        const page = this.requireStore().queryTraces({ limit: 1000, ...parseTraceQuery(request.query as Query) });
        if (page.nextCursor) reply.header('x-next-cursor', page.nextCursor);
        return download(reply, 'traces.json', this.requireStore().exportRuns(page.traces.map((t) => t.traceId)));
      }),
    );
    app.get('/api/stats', async (request, reply) =>
      answer(reply, () => statsBody(this.requireStore(), parseStatsQuery(request.query as Query), this.pricer)),
    );
    app.get('/api/threads', async (request, reply) =>
      answer(reply, () => threadPage(this.requireStore(), parseThreadQuery(request.query as Query))),
    );
    app.get('/api/threads/:threadId', async (request, reply) => {
      const { threadId } = request.params as { threadId: string };
      const body = threadDetail(this.requireStore(), threadId, this.pricer);
      return body ?? notFound(reply, `no thread ${threadId} in the store`);
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
      // uPlot draws the monitoring charts: its ES module and stylesheet from node_modules.
      await registerBrowserModules(ui, '/ui', { 'uplot.mjs': 'uplot/dist/uPlot.esm.js' });
      ui.get('/ui/vendor/uplot.css', async (_request, reply) =>
        reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(UPLOT_CSS),
      );
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
      ui.get('/ui/monitor', page);
      ui.get('/ui/threads', page);
      ui.get('/ui/threads/:threadId', page);
      ui.get('/ui', async (_request, reply) => reply.redirect('/ui/traces'));
      ui.get('/ui/', async (_request, reply) => reply.redirect('/ui/traces'));
      ui.get('/', async (_request, reply) => reply.redirect('/ui/traces'));
    });
  }
}

/** Answers with `body()`, or 422 naming the parameter when the query is bad. */
function answer(reply: FastifyReply, body: () => unknown) {
  try {
    return body();
  } catch (error) {
    if (error instanceof QueryError || error instanceof InvalidCursorError || error instanceof InvalidTimeError) {
      const field =
        error instanceof QueryError ? error.field : error instanceof InvalidCursorError ? 'cursor' : undefined;
      const message = field && !error.message.startsWith(field) ? `${field}: ${error.message}` : error.message;
      return sendCodedError(reply, new ExplorerInvalidError([message]), { fields: field ? { field } : {} });
    }
    throw error;
  }
}

function notFound(reply: FastifyReply, message: string) {
  return sendCodedError(reply, new ExplorerNotFoundError([message]));
}

/** A JSON file to save: `{"post": [...runs]}`, written run by run. */
function download(reply: FastifyReply, filename: string, runs: Iterable<Run>) {
  const parts = ['{"post":['];
  let first = true;
  for (const run of runs) {
    parts.push(first ? JSON.stringify(run) : `,${JSON.stringify(run)}`);
    first = false;
  }
  parts.push(']}\n');
  return reply
    .header('content-disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(parts.join(''));
}

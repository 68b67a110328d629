// The `loadbalancing` exporter: routes every span to one second-tier endpoint by its trace id (or
// its resource's service name) on a consistent-hash ring, so that one batcher sees every span of a
// trace. Like the OpenTelemetry Collector's, it holds one `otlp` exporter per endpoint — its own
// sending queue, retries and on-disk queue — so an endpoint that is slow or down fills only its
// own queue, and its batches wait on its own disk.
//
// Endpoint changes (resolver.ts) are applied one at a time: a new endpoint's exporter is started
// before the ring names it; a removed endpoint leaves the ring at once (new spans go to its
// successors), then its exporter is stopped — what it could not send within a short drain goes to
// its on-disk queue — and what that queue holds is routed again on the new ring, file by file,
// each file deleted only once every part of it is settled at its new endpoint (sent, or in that
// endpoint's own disk queue). The Collector shuts a removed endpoint's exporter down with its
// queue; here nothing waits for an address that may never come back (a pod's IP).

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ComponentSettings, Exporter, RequestContext, SpanBatch, ComponentMeter } from 'tracepipe/plugin';
import { Delivery, errorMessage, isThrottle, countSpans, componentTelemetry } from 'tracepipe/plugin';
import { CorruptBatchError, PersistentQueue } from 'tracepipe/exporterhelper';
import type { StoredBatch, StoredHeader, TenantHeader } from 'tracepipe/exporterhelper';
import { otlpExporter } from 'tracepipe/otlp';
import type { OtlpExporterConfig } from 'tracepipe/otlp';
import type { LoadBalancingExporterConfig } from './config.ts';
import { durationMs, staticHostnames } from './config.ts';
import { DnsResolver, StaticResolver, systemLookup } from './internal/resolver.ts';
import type { LookupFunction, Resolver } from './internal/resolver.ts';
import { HashRing } from './internal/ring.ts';
import { splitByEndpoint } from './internal/split.ts';
import { decodeStoredBody, queueDirectoryName } from './internal/stored.ts';

/**
 * How long a removed endpoint's exporter may still try to send before what it holds goes to disk
 * to be routed again. Short: an endpoint leaves the resolver's answer because it is gone or
 * draining (its receiver then answers 503), so waiting for it mostly delays the reroute.
 */
const RETIRE_DRAIN_MS = 2000;

/** Hooks for tests: a stub DNS lookup. */
export interface LoadBalancingOptions {
  readonly lookup?: LookupFunction;
}

type StoredTenant = TenantHeader & StoredHeader;

/** The on-disk queue of an endpoint no longer in the ring, being routed again. */
interface Orphan {
  readonly queue: PersistentQueue<StoredTenant>;
  /** Files whose parts are queued at their new endpoints and not settled yet. */
  readonly pending: Set<string>;
}

export class LoadBalancingExporter implements Exporter<'spans'> {
  readonly mutatesData = false;
  private readonly logger: Logger;
  private readonly resolver: Resolver;
  private ring = new HashRing([]);
  private readonly exporters = new Map<string, Exporter<'spans'>>();
  /** Endpoint changes and reroute passes, one at a time. */
  private changes: Promise<void> = Promise.resolve();
  private readonly orphans = new Map<string, Orphan>();
  private rerouteTimer?: NodeJS.Timeout;
  private readonly startSignal = new AbortController();
  private stopping = false;
  private shutdownPromise?: Promise<void>;
  private readonly metrics: ReturnType<typeof loadBalancingMetrics>;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: LoadBalancingExporterConfig,
    options: LoadBalancingOptions = {},
  ) {
    this.logger = settings.telemetry.logger;
    this.metrics = loadBalancingMetrics(settings.telemetry.meter);
    const { dns } = config.resolver;
    this.resolver = dns
      ? new DnsResolver({
          hostname: dns.hostname,
          port: dns.port,
          intervalMs: durationMs(dns.interval),
          timeoutMs: durationMs(dns.timeout),
          lookup: options.lookup ?? systemLookup,
          logger: this.logger,
          onResolution: (outcome) => this.metrics.resolutions.inc({ outcome }),
        })
      : new StaticResolver(staticHostnames(config.resolver.static?.hostnames ?? []));
  }

  /** The endpoints the ring routes to now (sorted). */
  get endpoints(): readonly string[] {
    return this.ring.endpoints;
  }

  /** Resolves the endpoints once and starts their exporters; DNS then keeps resolving in the background. */
  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.startSignal.abort(), { once: true });
    await this.resolver.start((endpoints) => this.enqueue(() => this.applyEndpoints(endpoints)));
    if (this.config.resolver.static) this.metrics.resolutions.inc({ outcome: 'success' });
    if (this.ring.size === 0)
      this.logger.warn('No endpoint is known yet; spans are refused (retryable) until one resolves.');
    const queue = this.config.protocol.otlp.persistent_queue;
    if (queue.enabled) {
      const pass = (): void => {
        if (this.stopping) return;
        this.rerouteTimer = setTimeout(() => {
          void this.enqueue(() => this.rerouteOrphans()).finally(pass);
        }, queue.replay_interval_ms);
      };
      pass();
    }
  }

  /**
   * Splits the batch by endpoint and queues each part at its endpoint's exporter, every part with
   * this request's context: one request's tenant never mixes with another's. Resolves once every
   * part is queued; when one endpoint's queue is full the request is refused (retryable) — the
   * parts already queued elsewhere are then sent again with the client's retry (at least once).
   */
  async consume(batch: SpanBatch, context: RequestContext): Promise<void> {
    if (this.stopping) throw new Error('the loadbalancing exporter is shutting down');
    const parts = splitByEndpoint(batch, this.config.routing_key, this.ring);
    if (parts.size === 0) {
      if (countSpans(batch) === 0) return;
      throw new Error('no endpoint to send spans to: the resolver has found none yet');
    }
    // Exporters are looked up now: a later endpoint change must not find a part without one.
    const sends = [...parts].map(([endpoint, part]) => this.exporters.get(endpoint)!.consume(part, context));
    const results = await Promise.allSettled(sends);
    const failures = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failures.length > 0) {
      // A throttle is the most useful answer: the client backs off and retries.
      throw (failures.find((failure) => isThrottle(failure.reason)) ?? failures[0]!).reason;
    }
  }

  shutdown(deadline: number): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  private async doShutdown(deadline: number): Promise<void> {
    this.stopping = true;
    this.resolver.stop();
    clearTimeout(this.rerouteTimer);
    this.startSignal.abort();
    // A change in progress (a retiring endpoint draining) ends within its own short bound.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.changes,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    const exporters = [...this.exporters.values()];
    this.exporters.clear();
    for (const orphan of this.orphans.values()) await orphan.queue.close();
    this.orphans.clear();
    const results = await Promise.allSettled(exporters.map((exporter) => exporter.shutdown(deadline)));
    const errors = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    if (errors.length > 0) throw new AggregateError(errors, 'endpoint exporters failed to stop');
  }

  private enqueue(change: () => Promise<void>): Promise<void> {
    const next = this.changes.then(change).catch((error: unknown) => {
      this.logger.error({ err: error }, 'An endpoint change failed.');
    });
    this.changes = next;
    return next;
  }

  private async applyEndpoints(endpoints: readonly string[]): Promise<void> {
    if (this.stopping || this.ring.sameEndpoints(endpoints)) return;
    const added = endpoints.filter((endpoint) => !this.exporters.has(endpoint));
    const removed = [...this.exporters.keys()].filter((endpoint) => !endpoints.includes(endpoint));
    for (const endpoint of added) {
      // Its own queue directory may hold batches of an earlier run: that exporter replays them, so
      // the directory is no orphan any more (and its lock is the new exporter's to take).
      const directory = this.queueDirectory(endpoint);
      await this.orphans.get(directory)?.queue.close();
      this.orphans.delete(directory);
      const exporter = this.createExporter(endpoint);
      await exporter.start(this.startSignal.signal);
      this.exporters.set(endpoint, exporter);
    }
    // From here on new spans go to the new ring; the removed endpoints' exporters drain below.
    this.ring = new HashRing(endpoints);
    const retiring = removed.map((endpoint) => {
      const exporter = this.exporters.get(endpoint)!;
      this.exporters.delete(endpoint);
      return exporter;
    });
    this.metrics.endpoints.set(this.ring.size);
    this.metrics.updates.inc();
    this.logger.info(
      { endpoints: this.ring.endpoints, added, removed },
      removed.length > 0 ? 'Endpoints changed; spans of removed endpoints are routed again.' : 'Endpoints changed.',
    );
    await Promise.allSettled(retiring.map((exporter) => exporter.shutdown(Date.now() + RETIRE_DRAIN_MS)));
    await this.rerouteOrphans();
  }

  private createExporter(endpoint: string): Exporter<'spans'> {
    const otlp = this.config.protocol.otlp;
    const config: OtlpExporterConfig = {
      ...otlp,
      endpoint: /^https?:\/\//.test(endpoint) ? endpoint : `http://${endpoint}`,
      persistent_queue: { ...otlp.persistent_queue, directory: this.queueDirectory(endpoint) },
    };
    const id = `${this.settings.id}/${endpoint}`;
    // The endpoint's exporter logs as this component (with its endpoint) and counts under its own
    // id, so each endpoint's queue, retries and drops show as their own series.
    const { meter } = componentTelemetry({
      id,
      kind: 'exporter',
      logger: this.settings.telemetry.logger,
      registry: this.settings.host.metrics,
    });
    const telemetry = { logger: this.settings.telemetry.logger.child({ endpoint }), meter };
    return otlpExporter({ ...this.settings, id, telemetry }, Object.freeze(config));
  }

  /** The endpoint's queue directory as the config spells it (resolved against the config file by the host). */
  private queueDirectory(endpoint: string): string {
    return join(this.config.protocol.otlp.persistent_queue.directory, queueDirectoryName(endpoint));
  }

  /**
   * Routes again the batches in queue directories of endpoints no longer in the ring (those just
   * removed, or left by an earlier run with other endpoints). A file goes once every part of it is
   * settled at its new endpoint; a part refused (queue full) or given up leaves the file for the
   * next pass (every `replay_interval_ms`) — a part sent twice then, never one lost.
   */
  private async rerouteOrphans(): Promise<void> {
    const { persistent_queue: queueConfig } = this.config.protocol.otlp;
    if (!queueConfig.enabled || this.stopping || this.ring.size === 0) return;
    const base = this.settings.host.resolvePath(queueConfig.directory);
    let names: string[];
    try {
      names = (await readdir(base, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return; // Nothing stored yet.
    }
    const current = new Set(this.ring.endpoints.map((endpoint) => queueDirectoryName(endpoint)));
    for (const name of names) {
      if (current.has(name) || this.stopping) continue;
      const directory = join(base, name);
      let orphan = this.orphans.get(directory);
      if (!orphan) {
        orphan = { queue: new PersistentQueue<StoredTenant>(directory, queueConfig.max_bytes), pending: new Set() };
        const corrupt = await orphan.queue.open();
        if (corrupt.length > 0)
          this.logger.error({ files: corrupt, directory }, 'Unreadable queue files were set aside as *.corrupt.');
        this.orphans.set(directory, orphan);
      }
      for (const entry of orphan.queue.list()) {
        if (this.stopping || this.ring.size === 0) return;
        if (!orphan.pending.has(entry.name)) await this.rerouteFile(orphan, entry);
      }
      if (orphan.queue.depth === 0 && orphan.pending.size === 0) {
        this.orphans.delete(directory);
        // Only an empty directory goes (a dead-letter file stays for the operator).
        await orphan.queue.removeIfEmpty();
      }
    }
  }

  private async rerouteFile(orphan: Orphan, entry: StoredBatch<StoredTenant>): Promise<void> {
    let batch: SpanBatch;
    try {
      const body = await orphan.queue.read(entry);
      if (!body) return;
      batch = decodeStoredBody(body);
    } catch (error) {
      if (!(error instanceof CorruptBatchError)) await orphan.queue.remove(entry);
      this.settings.telemetry.meter.dropped('spans', 'corrupt', entry.header.items);
      this.logger.error(
        { err: error, batch: entry.name, directory: orphan.queue.directory, spans: entry.header.items },
        'A queued batch of a removed endpoint could not be read; it is dropped.',
      );
      return;
    }
    orphan.pending.add(entry.name);
    // Durable: the file keeps the data until every part is settled, so an endpoint that gives a
    // part up leaves the file for the next pass instead of counting a loss.
    const delivery = new Delivery(true, (outcome) => {
      orphan.pending.delete(entry.name);
      if (outcome === 'settled') void orphan.queue.remove(entry).catch(() => undefined);
    });
    const { header } = entry;
    const context: RequestContext = {
      project: header.project,
      ...(header.apiKey ? { apiKey: header.apiKey } : {}),
      delivery,
    };
    try {
      await this.consume(batch, context);
      this.metrics.rerouted.inc(entry.header.items);
      delivery.release();
    } catch (error) {
      this.logger.warn(
        { error: errorMessage(error), batch: entry.name },
        'A batch of a removed endpoint could not be routed again yet; the next pass retries it.',
      );
      delivery.abandon();
    }
  }
}

function loadBalancingMetrics(meter: ComponentMeter) {
  return {
    endpoints: meter.gauge({
      name: 'tracepipe_loadbalancing_exporter_endpoints',
      help: 'Endpoints in the ring.',
    }),
    resolutions: meter.counter<'outcome'>({
      name: 'tracepipe_loadbalancing_exporter_resolutions_total',
      help: 'Resolutions of the endpoints, by outcome (success, failure).',
      labelNames: ['outcome'],
    }),
    updates: meter.counter({
      name: 'tracepipe_loadbalancing_exporter_endpoint_updates_total',
      help: 'Resolutions that changed the set of endpoints (each rebalances the ring).',
    }),
    rerouted: meter.counter({
      name: 'tracepipe_loadbalancing_exporter_rerouted_spans_total',
      help: 'Spans taken from the on-disk queue of a removed endpoint and routed again.',
    }),
  };
}

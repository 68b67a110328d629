// The running service: instantiates the components of a validated config, wires them into
// pipelines, and owns their lifecycle.
//
// Wiring follows the OpenTelemetry Collector: each receiver and exporter is one instance shared by
// every pipeline that names it (a receiver fans out to its pipelines); processors are instantiated
// once per pipeline, since they hold per-pipeline state (a batcher's buffer).
//
// Start order is extensions → exporters → processors → receivers so that nothing receives data
// before its downstream can take it; stop order is the reverse, so that receivers stop accepting
// first and everything buffered drains into components that are still running. Extensions (outside
// the pipelines: query APIs, pages) start first and stop last, as in the Collector, so that they
// serve for as long as anything runs and other components find them started.

import type { Logger } from 'pino';
import type { Registry as MetricsRegistry } from 'prom-client';
import { resolve } from 'node:path';
import { TracepipeError } from '../errors.ts';
import type { ServiceConfig } from '../config/load.ts';
import type { PipelineConfig } from '../config/schema.ts';
import type { ComponentCounters } from '../telemetry/metrics.ts';
import { componentTelemetry } from '../telemetry/component.ts';
import { componentCounters } from '../telemetry/metrics.ts';
import type {
  ComponentDescription,
  ComponentKind,
  ComponentSettings,
  Consumer,
  Exporter,
  Extension,
  Host,
  Lifecycle,
  Processor,
  Receiver,
} from './component.ts';
import type { DataType } from './data.ts';
import { errorMessage } from './errors.ts';
import { fanout, observeConsumer, refusalOf } from './consumers.ts';

type ServiceState = 'created' | 'starting' | 'ready' | 'draining' | 'stopped';

/**
 * Drop reasons that mean accepted data was lost for want of time or room, as opposed to data the
 * pipeline refuses on purpose (invalid ids, too large, rejected by the destination): a shutdown
 * during which any of these is counted did not stop cleanly.
 */
export const LOSS_REASONS: ReadonlySet<string> = new Set([
  'shutdown',
  'shutdown_deadline',
  'retries_exhausted',
  'disk_queue_full',
  'internal_error',
]);

/** Share of the shutdown budget reserved for exporters, after receivers and processors are done. */
const EXPORTER_SHUTDOWN_SHARE = 0.25;

/** What a shutdown achieved. */
export interface ShutdownReport {
  /** Items counted as lost (LOSS_REASONS) while shutting down. */
  readonly lostItems: number;
}

interface Instance {
  readonly id: string;
  readonly kind: ComponentKind;
  readonly component: Lifecycle;
  readonly stability: string;
}

export interface ServiceOptions {
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  /** Development mode: `Host.watch`. */
  readonly watch?: boolean;
}

export class Service {
  private state: ServiceState = 'created';
  private readonly exporters: Instance[] = [];
  private readonly processors: Instance[] = [];
  private readonly receivers: Instance[] = [];
  private readonly extensions: Instance[] = [];
  private readonly extensionsById = new Map<string, Extension>();
  private readonly abort = new AbortController();
  private readonly counters: ComponentCounters;
  private readonly logger: Logger;
  readonly host: Host;
  private shutdownPromise?: Promise<ShutdownReport>;

  constructor(
    private readonly config: ServiceConfig,
    private readonly options: ServiceOptions,
  ) {
    this.logger = options.logger;
    this.counters = componentCounters(options.metrics);
    this.host = {
      state: () => (this.state === 'created' ? 'starting' : this.state),
      metrics: options.metrics,
      resolvePath: (path: string) => resolve(config.baseDir, path),
      getExtensions: () => this.extensionsById,
      ...(options.watch ? { watch: true } : {}),
    };
    this.build();
  }

  /** The process-wide readiness: `ready` once every component has started. */
  get status(): ServiceState {
    return this.state;
  }

  private settings(id: string, kind: ComponentKind): ComponentSettings {
    return {
      id,
      kind,
      telemetry: componentTelemetry({ id, kind, logger: this.logger, registry: this.options.metrics }),
      host: this.host,
    };
  }

  private labels(id: string, kind: ComponentKind, type: string) {
    return { component_id: id, component_kind: kind, data_type: type };
  }

  private build(): void {
    const { config } = this;
    for (const [id, entry] of config.extensions ?? []) {
      if (entry.factory.kind !== 'extension') continue;
      const extension: Extension = entry.factory.create(this.settings(id, 'extension'), entry.config);
      this.extensions.push({ id, kind: 'extension', component: extension, stability: entry.factory.stability });
      this.extensionsById.set(id, extension);
    }
    const exporterInputs = new Map<string, Consumer>();
    for (const [id, entry] of config.exporters) {
      if (entry.factory.kind !== 'exporter') continue;
      const exporter: Exporter = entry.factory.create(this.settings(id, 'exporter'), entry.config);
      this.exporters.push({ id, kind: 'exporter', component: exporter, stability: entry.factory.stability });
      const type = entry.factory.consumes;
      exporterInputs.set(id, observeConsumer(exporter, this.labels(id, 'exporter', type), this.counters, 'received'));
    }

    const pipelineHeads = new Map<string, Consumer[]>(); // receiver id → heads of its pipelines
    for (const [name, pipeline] of Object.entries(config.pipelines)) {
      let next: Consumer = fanout(pipeline.exporters.map((id) => exporterInputs.get(id)!));
      let mutates = false;
      const inputTypes = processorInputTypes(config, pipeline);
      for (const [index, id] of [...pipeline.processors.entries()].reverse()) {
        const entry = config.processors.get(id)!;
        if (entry.factory.kind !== 'processor') continue;
        // A processor of `any` type carries, in this pipeline, what reaches it.
        const consumes = entry.factory.consumes === 'any' ? inputTypes[index]! : entry.factory.consumes;
        const produces = entry.factory.produces === 'any' ? consumes : entry.factory.produces;
        // A processor's output says whether anything downstream writes to what it passes on (a
        // later processor may write to the very objects an earlier one passed through): the batch
        // processor, for one, leaves each run's JSON text on it only when nothing will change it.
        const downstream = next;
        const onward: Consumer =
          mutates && !downstream.mutatesData
            ? {
                mutatesData: true,
                ...refusalOf(downstream),
                consume: (data, context) => downstream.consume(data, context),
              }
            : downstream;
        const output = observeConsumer(onward, this.labels(id, 'processor', produces), this.counters, 'sent');
        const processor: Processor = entry.factory.create(this.settings(id, 'processor'), entry.config, output);
        mutates ||= processor.mutatesData;
        this.processors.unshift({
          id: `${id}[${name}]`,
          kind: 'processor',
          component: processor,
          stability: entry.factory.stability,
        });
        next = observeConsumer(processor, this.labels(id, 'processor', consumes), this.counters, 'received');
      }
      // As in the Collector, a pipeline mutates data if any of its processors does: the receiver's
      // fan-out must then clone for the whole pipeline, since a later processor may write to what
      // an earlier one passed on (which may share parts with its input).
      const head = next;
      const input: Consumer =
        mutates && !head.mutatesData
          ? { mutatesData: true, ...refusalOf(head), consume: (data, context) => head.consume(data, context) }
          : head;
      for (const id of pipeline.receivers) {
        pipelineHeads.set(id, [...(pipelineHeads.get(id) ?? []), input]);
      }
    }

    for (const [id, entry] of config.receivers) {
      if (entry.factory.kind !== 'receiver') continue;
      const type = entry.factory.produces;
      const output = observeConsumer(
        fanout(pipelineHeads.get(id) ?? []),
        this.labels(id, 'receiver', type),
        this.counters,
        'sent',
      );
      const receiver: Receiver = entry.factory.create(this.settings(id, 'receiver'), entry.config, output);
      this.receivers.push({ id, kind: 'receiver', component: receiver, stability: entry.factory.stability });
    }
  }

  /** Starts extensions, exporters, processors, then receivers. On failure, stops what had started. */
  async start(): Promise<void> {
    if (this.state !== 'created') throw new Error(`service cannot start from state ${this.state}`);
    this.state = 'starting';
    for (const instance of [...this.extensions, ...this.exporters, ...this.processors, ...this.receivers]) {
      if (instance.stability === 'development') {
        this.logger.warn(
          { component: { id: instance.id, kind: instance.kind } },
          'Component is in development; its behaviour may change.',
        );
      }
      try {
        await instance.component.start(this.abort.signal);
      } catch (error) {
        // The reason in one line; the stack only for those who asked for details (the command
        // line prints the reason once more, with a hint, as its last words).
        const component = { id: instance.id, kind: instance.kind };
        this.logger.error({ component, error: errorMessage(error) }, 'Component failed to start; stopping.');
        this.logger.debug({ component, err: error }, 'Start failure details.');
        await this.shutdown(Date.now() + this.config.service.shutdown_timeout_ms).catch(() => undefined);
        throw new TracepipeError('TP_ERR_START', [instance.id, errorMessage(error)], { cause: error });
      }
    }
    this.state = 'ready';
    this.logger.info(
      {
        receivers: this.receivers.length,
        processors: this.processors.length,
        exporters: this.exporters.length,
        extensions: this.extensions.length,
      },
      'Everything is ready; pipelines are running.',
    );
  }

  /**
   * What each started component describes of itself (`Lifecycle.describe`), receivers first and
   * extensions last.
   */
  describe(): Array<{ readonly id: string; readonly kind: ComponentKind } & ComponentDescription> {
    const described = [];
    for (const instance of [...this.receivers, ...this.processors, ...this.exporters, ...this.extensions]) {
      const description = instance.component.describe?.();
      if (description) described.push({ id: instance.id, kind: instance.kind, ...description });
    }
    return described;
  }

  /**
   * Stops receivers, then processors, then exporters, then extensions, each given what is left of
   * the deadline.
   * Idempotent. Gathers every failure into one AggregateError instead of stopping at the first.
   */
  shutdown(deadline: number = Date.now() + this.config.service.shutdown_timeout_ms): Promise<ShutdownReport> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  private async doShutdown(deadline: number): Promise<ShutdownReport> {
    const lostBefore = await this.itemsLost();
    this.state = 'draining';
    this.abort.abort();
    const failures: Error[] = [];
    // Components that never started still get shutdown(): the contract makes it safe, and a
    // component may have allocated resources in create().
    // Exporters keep the last part of the budget: what processors flush at their deadline still
    // needs time to be sent or written to disk, and an upload cut off mid-flight is a duplicate.
    const upstreamDeadline = deadline - Math.floor(Math.max(0, deadline - Date.now()) * EXPORTER_SHUTDOWN_SHARE);
    for (const instance of [...this.receivers, ...this.processors, ...this.exporters, ...this.extensions]) {
      try {
        const last = instance.kind === 'exporter' || instance.kind === 'extension';
        await instance.component.shutdown(last ? deadline : upstreamDeadline);
      } catch (error) {
        failures.push(new Error(`${instance.kind} ${instance.id}: ${errorMessage(error)}`, { cause: error }));
      }
    }
    this.state = 'stopped';
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `shutdown did not complete cleanly: ${failures.map((f) => f.message).join('; ')}`,
      );
    }
    return { lostItems: (await this.itemsLost()) - lostBefore };
  }

  /** Sum of the items every component counted as lost (LOSS_REASONS) so far. */
  private async itemsLost(): Promise<number> {
    const { values } = await this.counters.dropped.get();
    let lost = 0;
    for (const { labels, value } of values) if (LOSS_REASONS.has(String(labels.reason))) lost += value;
    return lost;
  }
}

/**
 * The data type reaching each processor of a pipeline (the validated config guarantees the chain
 * agrees): what its receivers produce, then what each typed processor turns it into.
 */
function processorInputTypes(config: ServiceConfig, pipeline: PipelineConfig): DataType[] {
  const receiver = config.receivers.get(pipeline.receivers[0]!)?.factory;
  let type: DataType = receiver?.kind === 'receiver' ? receiver.produces : 'spans';
  return pipeline.processors.map((id) => {
    const input = type;
    const factory = config.processors.get(id)?.factory;
    if (factory?.kind === 'processor' && factory.produces !== 'any') type = factory.produces;
    return input;
  });
}

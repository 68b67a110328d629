// The component contract: what every receiver, processor, exporter and extension — built-in or
// third-party — implements, and the factory through which the framework creates it from YAML config.

import type { Registry } from 'prom-client';
import type { TelemetrySettings } from '../telemetry/component.ts';
import type { ConsumedType, DataOf, DataType, RequestContext } from './data.ts';
import type { ThrottleError } from './errors.ts';

export type ComponentKind = 'receiver' | 'processor' | 'exporter' | 'extension';
export const COMPONENT_KINDS: readonly ComponentKind[] = ['receiver', 'processor', 'exporter', 'extension'];

/** How far along a component is; `development` components are announced in the start-up log. */
export type Stability = 'development' | 'alpha' | 'beta' | 'stable';

/**
 * Something that accepts batches of one data type.
 *
 * Ownership: once `consume()` resolves, the batch belongs to the callee, and the caller must not
 * touch it again. A consumer that modifies batches it receives declares `mutatesData`, so that a
 * fan-out clones the batch for it rather than letting it change another consumer's copy.
 *
 * `consume()` resolves when the data is safely held (buffered within bounds or persisted) — not
 * necessarily when it has been exported. It rejects with `PermanentError` when the data is bad,
 * `ThrottleError` when a bounded buffer is full, and anything else for a retryable failure.
 */
export interface Consumer<T extends DataType = DataType> {
  readonly mutatesData: boolean;
  consume(data: DataOf[T], context: RequestContext): Promise<void>;
  /**
   * The ThrottleError `consume()` would reject any batch with now, or undefined when it might take
   * one. Optional: a consumer that refuses by its own state rather than by the batch (the
   * `memory_limiter` processor, first in its pipeline) offers it, and the framework passes it up
   * through fan-outs to the receivers, whose intake then refuses a request once its body is read,
   * without journaling and decoding it first. It must be cheap: it is asked once per request, and
   * an answer means that request is refused (a consumer may count it as one).
   */
  refusal?(): ThrottleError | undefined;
}

/**
 * The lifecycle every component implements.
 *
 * - `start(signal)` returns quickly; background work gets its own AbortController and stops when
 *   `signal` aborts. Start is the only place with I/O (listening, connecting, opening files).
 * - `shutdown(deadline)` stops accepting data, flushes what it holds downstream, and clears every
 *   timer and socket. It must be idempotent and safe to call without `start()`. `deadline` is an
 *   epoch-milliseconds time after which the component should give up waiting and return.
 */
export interface Lifecycle {
  start(signal: AbortSignal): Promise<void>;
  shutdown(deadline: number): Promise<void>;
  /**
   * What a started component offers its operator, for the start banner: the URLs it answers on
   * (each with its purpose) and a few facts (where its data lives, what it loaded, ...). Optional;
   * called once after every component has started.
   */
  describe?(): ComponentDescription;
}

/** One address a component answers on: a full URL and what it is for. */
export interface Endpoint {
  readonly url: string;
  /** A few words: "Agent API", "OTLP/HTTP traces", "Prometheus metrics", ... */
  readonly purpose: string;
}

/** What a started component tells its operator (see `Lifecycle.describe`). */
export interface ComponentDescription {
  readonly endpoints?: readonly Endpoint[];
  /** Labelled facts, e.g. `{ "data directory": "/var/lib/tracepipe/agent" }`. */
  readonly details?: Readonly<Record<string, string>>;
}

export interface Receiver extends Lifecycle {}
export interface Processor<I extends DataType = DataType> extends Lifecycle, Consumer<I> {}
export interface Exporter<I extends DataType = DataType> extends Lifecycle, Consumer<I> {}
/**
 * A component outside the pipelines, as in the OpenTelemetry Collector: a query API and web pages,
 * a health endpoint, ... Enabled by `service.extensions`; every extension starts before the first
 * exporter and stops after the last one, so it may serve while the pipelines drain.
 */
export interface Extension extends Lifecycle {}

/**
 * Optional capability of an extension that shows traces in a browser (`trace_explorer`): other
 * components (the agent server's web interface) find it through `Host.getExtensions()` and link to
 * it. Both methods answer once the extension has started.
 */
export interface TraceViewer {
  /** The URL of the trace list, e.g. `http://127.0.0.1:4319/ui/traces`. */
  traceListUrl(): string | undefined;
  /** The URL of one trace (and one of its runs), e.g. `…/ui/traces/<trace_id>?run=<run_id>`. */
  traceUrl(traceId: string, runId?: string): string | undefined;
  /**
   * Puts the viewer's data behind another component's authentication: called while the service
   * is built (before anything starts) by a component whose clients' data the viewer shows (the
   * agent server), so that the viewer knows from its own start that it is protected, and answers
   * 503 until the guard is armed. Optional: a viewer without it has no data worth protecting.
   */
  guardWith?(owner: string): TraceViewerGuard;
}

/** Decides one request to a trace viewer: undefined lets it through, else the refusal to send. */
export type TraceAccessCheck = (request: {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}) => Promise<TraceAccessRefusal | undefined>;

export interface TraceAccessRefusal {
  readonly statusCode: number;
  readonly code: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The owner's side of `guardWith`. */
export interface TraceViewerGuard {
  /**
   * The owner started: `check` decides every request from now on; `undefined` says the owner has
   * no authentication, which throws (failing the owner's start) when the viewer is reachable from
   * other machines and not configured `insecure`.
   */
  arm(check: TraceAccessCheck | undefined): void;
}

/** Whether a component offers `TraceViewer`. */
export function isTraceViewer(component: unknown): component is TraceViewer {
  const candidate = component as Partial<TraceViewer> | null;
  return typeof candidate?.traceListUrl === 'function' && typeof candidate.traceUrl === 'function';
}

/** What the framework offers components at run time, beyond their own config. */
export interface Host {
  /** `starting` until every component has started, `ready` afterwards, `draining` during stop. */
  readonly state: () => 'starting' | 'ready' | 'draining' | 'stopped';
  /** The process's Prometheus registry (what `settings.telemetry.meter` registers in). */
  readonly metrics: Registry;
  /** Resolves a path from the config relative to the config file's directory. */
  readonly resolvePath: (path: string) => string;
  /** Development (`--watch`): a component that loads user code reloads it when its files change. */
  readonly watch?: boolean;
  /**
   * The enabled extensions by id (`service.extensions`), as the Collector's `Host.GetExtensions()`.
   * Extensions start first, so a receiver or exporter sees them started from its own `start()`.
   */
  readonly getExtensions: () => ReadonlyMap<string, Extension>;
}

/** What the framework hands a component besides its config. Never mixed with `Config`. */
export interface ComponentSettings {
  /** Instance id, `type` or `type/name`. */
  readonly id: string;
  readonly kind: ComponentKind;
  /**
   * The component's logger (carrying `component.id` and `component.kind`) and meter (whose
   * instruments carry its `component_id` label), like the Collector's `TelemetrySettings`.
   */
  readonly telemetry: TelemetrySettings;
  readonly host: Host;
}

interface FactoryBase<K extends ComponentKind, C> {
  readonly kind: K;
  /** `lower_snake_case`; checked when registered. */
  readonly type: string;
  readonly stability: Stability;
  /** One line, shown by `tracepipe components`. */
  readonly description: string;
  /**
   * JSON Schema of the config (draft-07, as ajv speaks it). The single source of defaults:
   * they are applied by ajv's `useDefaults`. Every object level is `additionalProperties: false`.
   */
  readonly configSchema: Record<string, unknown>;
  /** Pure cross-field checks, after schema validation; each string names the offending key. */
  validate?(config: C): string[];
  /**
   * Addresses this component will listen on (`host:port`), so that two components claiming the
   * same port are reported before anything starts. Port 0 (any free port) never conflicts.
   */
  listenAddresses?(config: C): string[];
  /**
   * Files the config names that the component reads when it starts (`key` is the config key,
   * `path` as written, relative to the config file's folder), so that `tracepipe validate` and
   * the start report a missing one with its key before anything starts.
   */
  namedFiles?(config: C): NamedFile[];
}

/** A file a component's config names: its key in the config, and the path as written. */
export interface NamedFile {
  readonly key: string;
  readonly path: string;
}

export interface ReceiverFactory<C = unknown, O extends DataType = DataType> extends FactoryBase<'receiver', C> {
  readonly produces: O;
  create(settings: ComponentSettings, config: C, next: Consumer<O>): Receiver;
}

export interface ProcessorFactory<
  C = unknown,
  I extends DataType = DataType,
  O extends DataType = DataType,
> extends FactoryBase<'processor', C> {
  /**
   * `any` on both sides: a processor that passes on whatever its pipeline carries, unchanged in
   * type (the `memory_limiter`, which only decides whether to take a batch at all). Its data type
   * in each pipeline is the one that reaches it there.
   */
  readonly consumes: I | 'any';
  readonly produces: O | 'any';
  create(settings: ComponentSettings, config: C, next: Consumer<O>): Processor<I>;
}

export interface ExporterFactory<C = unknown, I extends DataType = DataType> extends FactoryBase<'exporter', C> {
  /** `any`: a type-agnostic sink (debug, file) that accepts whatever its pipelines carry. */
  readonly consumes: I | 'any';
  create(settings: ComponentSettings, config: C): Exporter<I>;
}

export interface ExtensionFactory<C = unknown> extends FactoryBase<'extension', C> {
  create(settings: ComponentSettings, config: C): Extension;
}

export type Factory = ReceiverFactory | ProcessorFactory | ExporterFactory | ExtensionFactory;

/** A plugin module's default export (or named `factories` export): one factory or several. */
export type PluginExport = Factory | readonly Factory[];

// Maps LangGraph's `streamEvents` output to the API's stream events, per requested `stream_mode`:
// `values`, `updates`, `debug`, `custom`, `tasks`, `checkpoints`, `tools` pass through (named
// `<mode>|<namespace>` for subgraphs); `messages-tuple` becomes `messages` events carrying
// `[message chunk, metadata]`; the legacy `messages` mode becomes `messages/metadata`,
// `messages/partial` and `messages/complete`; `events` forwards the raw LangChain events.

import type { StreamEvent as LangChainEvent } from '@langchain/core/tracers/log_stream';
import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { ApiStreamMode } from '../api/stream-modes.ts';
import { toWire } from '../graphs/serialize.ts';

/** The modes to ask LangGraph for, given the modes the client asked for. */
export function libraryModes(requested: readonly ApiStreamMode[]): string[] {
  const modes = new Set<string>(['values']); // Always: `wait`/`join` answer with the last values.
  for (const mode of requested) {
    if (mode === 'messages-tuple') modes.add('messages');
    else if (mode !== 'events' && mode !== 'messages') modes.add(mode);
  }
  return [...modes];
}

/** `events` and the legacy `messages` mode read LangChain's event stream; the others do not. */
export function needsEventStream(requested: readonly ApiStreamMode[]): boolean {
  return requested.includes('events') || requested.includes('messages');
}

export interface MappedEvent {
  readonly event: string;
  readonly data: unknown;
}

/** Strips a checkpoint payload's config down to its checkpoint reference, without internals. */
function cleanCheckpointPayload(payload: unknown): unknown {
  if (!payload || typeof payload !== 'object') return toWire(payload);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (key === 'config' || key === 'parent_config' || key === 'parentConfig') {
      const configurable = (value as { configurable?: Record<string, unknown> } | undefined)?.configurable;
      out[key === 'config' ? 'checkpoint' : 'parent_checkpoint'] = configurable
        ? {
            thread_id: configurable.thread_id ?? null,
            checkpoint_ns: configurable.checkpoint_ns ?? '',
            checkpoint_id: configurable.checkpoint_id ?? null,
            checkpoint_map: configurable.checkpoint_map ?? null,
          }
        : null;
    } else {
      out[key] = toWire(value);
    }
  }
  return out;
}

/**
 * Whether a message is a chunk that concatenates. Told by its `concat` method, not by
 * `isBaseMessageChunk`: that walks the prototype chain to this server's own `BaseMessageChunk`,
 * and a graph that brings its own copy of `@langchain/core` (another version in its
 * node_modules) streams chunks of that copy's classes, which it would not recognise.
 */
function isChunk(message: BaseMessage): message is BaseMessage & { concat(other: BaseMessage): BaseMessage } {
  return typeof (message as { concat?: unknown }).concat === 'function';
}

/** One run's mapper: feed it every event of `streamEvents`, it returns what to send. */
export class StreamModeMapper {
  private readonly requested: Set<ApiStreamMode>;
  private readonly completed = new Set<string>();
  private readonly partial = new Map<string, BaseMessage>();
  /** The root graph's last `values` chunk that is not an interrupt notice. */
  private lastValues: unknown = undefined;
  /** Interrupts the root graph announced (`{__interrupt__: [...]}` values chunks). */
  private interrupts: unknown[] | undefined;

  constructor(
    requested: readonly ApiStreamMode[],
    private readonly rootRunId: string,
    private readonly subgraphs: boolean,
  ) {
    this.requested = new Set(requested);
  }

  map(event: LangChainEvent): MappedEvent[] {
    if (event.tags?.includes('langsmith:hidden')) return [];
    const out: MappedEvent[] = [];
    if (event.event === 'on_chain_stream' && event.run_id === this.rootRunId) {
      const chunk = event.data.chunk as unknown[];
      const [namespace, mode, payload] = this.subgraphs
        ? (chunk as [string[], string, unknown])
        : ([[], chunk[0], chunk[1]] as [string[], string, unknown]);
      const suffix = namespace.length > 0 ? `|${namespace.join('|')}` : '';
      if (mode === 'values' && namespace.length === 0) this.noteValues(payload);
      if (mode === 'messages') {
        if (this.requested.has('messages-tuple')) out.push({ event: `messages${suffix}`, data: toWire(payload) });
      } else if (this.requested.has(mode as ApiStreamMode)) {
        const data =
          mode === 'checkpoints' || (mode === 'debug' && (payload as { type?: string })?.type === 'checkpoint')
            ? this.checkpointData(mode, payload)
            : toWire(payload);
        out.push({ event: `${mode}${suffix}`, data });
      }
      if (this.requested.has('messages') && mode === 'values' && namespace.length === 0)
        out.push(...this.completeMessages(payload));
      return out;
    }
    if (this.requested.has('events') && !(event.event === 'on_chain_stream' && event.run_id === this.rootRunId)) {
      out.push({ event: 'events', data: toWire(event) });
    }
    if (this.requested.has('messages') && event.event === 'on_chat_model_stream' && !event.tags?.includes('nostream')) {
      out.push(...this.partialMessage(event));
    }
    return out;
  }

  /**
   * What wait and join answer for a run that ended without failing — what LangGraph's own
   * `graph.invoke()` returns: the last root values, with the pending interrupts under
   * `__interrupt__` when the run paused. `undefined` when the root graph sent no values.
   */
  result(): unknown {
    if (this.interrupts === undefined) return this.lastValues;
    if (this.lastValues === undefined || this.lastValues === null || typeof this.lastValues !== 'object')
      return { __interrupt__: this.interrupts };
    return { ...(this.lastValues as object), __interrupt__: this.interrupts };
  }

  private noteValues(payload: unknown): void {
    const notice =
      payload !== null && typeof payload === 'object' && '__interrupt__' in payload
        ? (payload as { __interrupt__: unknown }).__interrupt__
        : undefined;
    if (notice === undefined) {
      this.lastValues = payload;
      return;
    }
    this.interrupts = [...(this.interrupts ?? []), ...(Array.isArray(notice) ? notice : [notice])];
  }

  private checkpointData(mode: string, payload: unknown): unknown {
    if (mode === 'debug') {
      const debug = payload as { payload?: unknown };
      return {
        ...(toWire({ ...debug, payload: undefined }) as object),
        payload: cleanCheckpointPayload(debug.payload),
      };
    }
    return cleanCheckpointPayload(payload);
  }

  private partialMessage(event: LangChainEvent): MappedEvent[] {
    const chunk = event.data.chunk as BaseMessage | undefined;
    if (!chunk || !isBaseMessage(chunk)) return [];
    const id = chunk.id ?? event.run_id;
    const out: MappedEvent[] = [];
    const previous = this.partial.get(id);
    if (!previous) out.push({ event: 'messages/metadata', data: { [id]: { metadata: toWire(event.metadata) } } });
    // A model streams chunks (AIMessageChunk, ...), which concatenate; a whole message replaces.
    const merged = previous && isChunk(previous) && isChunk(chunk) ? previous.concat(chunk) : chunk;
    this.partial.set(id, merged);
    const wire = toWire(merged) as Record<string, unknown>;
    wire.id = id;
    out.push({ event: 'messages/partial', data: [wire] });
    return out;
  }

  private completeMessages(values: unknown): MappedEvent[] {
    const messages = (values as { messages?: unknown } | undefined)?.messages;
    if (!Array.isArray(messages)) return [];
    const fresh = messages.filter((message) => {
      const id = isBaseMessage(message) ? message.id : (message as { id?: string })?.id;
      if (!id || this.completed.has(id)) return false;
      this.completed.add(id);
      return true;
    });
    return fresh.length > 0 ? [{ event: 'messages/complete', data: toWire(fresh) }] : [];
  }
}

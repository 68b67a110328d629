// The frames of the thread protocol (`/threads/{thread_id}/stream/events`, over a WebSocket or
// SSE): the events a run's stream becomes, and the responses to commands. A run's stream events are named
// `<mode>` or `<mode>|<namespace segment>|…` (subgraphs); here each becomes an event whose
// `method` is its channel and whose `params.namespace` is that namespace, as the LangGraph
// protocol (`@langchain/protocol`) frames them.

import { convertToProtocolEvent, normalizeNamespaceSegment } from '@langchain/langgraph/stream';

export type Namespace = string[];

/** Where a graph or subgraph is: the root's follows its run's status. */
export type LifecycleStatus = 'started' | 'running' | 'completed' | 'failed' | 'interrupted';

export interface ProtocolEvent {
  readonly type: 'event';
  readonly event_id: string;
  readonly seq: number;
  readonly method: string;
  readonly params: {
    readonly namespace: Namespace;
    readonly timestamp: number;
    readonly node?: string;
    readonly data: unknown;
  };
}

export interface ProtocolSuccess {
  readonly type: 'success';
  readonly id: number;
  readonly result: Record<string, unknown>;
  readonly meta?: Record<string, unknown>;
}

/** Error codes of the protocol's error frames. */
export type ProtocolErrorCode =
  | 'invalid_argument'
  | 'unknown_command'
  | 'not_supported'
  | 'no_such_run'
  | 'no_such_subscription'
  | 'no_such_interrupt'
  | 'permission_denied'
  | 'unknown_error';

export interface ProtocolError {
  readonly type: 'error';
  /** The command's id; null when the frame could not be read as a command. */
  readonly id: number | null;
  readonly error: ProtocolErrorCode;
  readonly message: string;
}

export interface ProtocolCommand {
  readonly id: number;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

/** An event before it is numbered: what one run stream event turns into. */
export interface EventDraft {
  readonly method: string;
  readonly namespace: Namespace;
  readonly node?: string;
  readonly data: unknown;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function success(id: number, result: Record<string, unknown>, meta?: Record<string, unknown>): ProtocolSuccess {
  return { type: 'success', id, result, ...(meta ? { meta } : {}) };
}

export function failure(id: number | null, error: ProtocolErrorCode, message: string): ProtocolError {
  return { type: 'error', id, error, message };
}

/**
 * Reads a frame as a command: an object with a non-negative integer `id` and a string `method`.
 * Otherwise, the error frame to send back.
 */
export function parseCommand(text: string): { command: ProtocolCommand } | { refusal: ProtocolError } {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return { refusal: failure(null, 'invalid_argument', 'Protocol commands must be valid JSON.') };
  }
  if (
    !isRecord(payload) ||
    typeof payload.id !== 'number' ||
    !Number.isInteger(payload.id) ||
    payload.id < 0 ||
    typeof payload.method !== 'string'
  )
    return {
      refusal: failure(null, 'invalid_argument', 'Protocol commands must include an integer id and string method.'),
    };
  if (payload.params !== undefined && !isRecord(payload.params))
    return { refusal: failure(payload.id, 'invalid_argument', 'Protocol command params must be an object.') };
  const command: ProtocolCommand = {
    id: payload.id,
    method: payload.method,
    ...(payload.params === undefined ? {} : { params: payload.params }),
  };
  return { command };
}

/** A run's status as a lifecycle status: pending and running runs are running. */
export function lifecycleOf(runStatus: string): LifecycleStatus {
  if (runStatus === 'success') return 'completed';
  if (runStatus === 'error' || runStatus === 'timeout') return 'failed';
  if (runStatus === 'interrupted') return 'interrupted';
  return 'running';
}

/** `gp_two:1f0…` → `gp_two`: a subgraph's name is its namespace segment without the task id. */
export function graphNameOf(namespace: Namespace): string {
  const last = namespace.at(-1);
  return last === undefined ? 'root' : normalizeNamespaceSegment(last);
}

/** The interrupts a values payload carries (`__interrupt__`), as `input.requested` data. */
function inputRequests(values: unknown): { interrupt_id: string; payload: unknown }[] {
  if (!isRecord(values) || !Array.isArray(values.__interrupt__)) return [];
  return values.__interrupt__.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === 'string' ? [{ interrupt_id: entry.id, payload: entry.value }] : [],
  );
}

/**
 * An event as LangGraph's protocol streaming frames it (`convertToProtocolEvent`, what the
 * reference server forwards): `messages` — `[message event, metadata]` from a run streamed with
 * `version: "v3"` — become the message event with the chat model's `run_id`, under the node that
 * called the model; `tools` payloads (`on_tool_start`, ...) become `tool-started`,
 * `tool-output-delta`, `tool-finished` and `tool-error` events.
 */
function converted(mode: 'messages' | 'tools', namespace: Namespace, payload: unknown): EventDraft[] {
  return convertToProtocolEvent({ namespace, mode, payload, seq: 0 }).map((event) => {
    const params = event.params as { node?: unknown; data: unknown };
    return {
      method: event.method,
      namespace,
      ...(typeof params.node === 'string' ? { node: params.node } : {}),
      data: params.data,
    };
  });
}

/**
 * The protocol events one run stream event becomes (none for the ones the protocol has no
 * channel for: `metadata`, `error` and `end` are the run's lifecycle, told by the session).
 * `values` lose their `__interrupt__` (each interrupt is an `input.requested` event instead) and
 * are dropped when nothing is left; `updates` become `{node, values}`, one per node; a `custom`
 * payload is wrapped as `{payload}`; `messages` and `tools` are framed as LangGraph frames them.
 */
export function draftsOf(name: string, data: unknown): EventDraft[] {
  const [mode = '', ...namespace] = name.split('|');
  switch (mode) {
    case 'values': {
      const requests = inputRequests(data).map((request) => ({
        method: 'input.requested',
        namespace,
        data: request,
      }));
      let values = data;
      if (isRecord(data) && '__interrupt__' in data) {
        const { __interrupt__: _interrupts, ...rest } = data;
        values = rest;
      }
      const empty = isRecord(values) && Object.keys(values).length === 0;
      return [...requests, ...(empty ? [] : [{ method: 'values', namespace, data: values }])];
    }
    case 'updates': {
      if (!isRecord(data)) return [];
      return Object.entries(data).flatMap(([node, values]): EventDraft[] => {
        if (node === '__interrupt__')
          return inputRequests({ __interrupt__: values }).map((request) => ({
            method: 'input.requested',
            namespace,
            data: request,
          }));
        return [{ method: 'updates', namespace, node, data: { node, values: values ?? {} } }];
      });
    }
    case 'custom':
      return [{ method: 'custom', namespace, data: { payload: data } }];
    case 'messages':
    case 'tools':
      return converted(mode, namespace, data);
    case 'tasks':
    case 'checkpoints':
      return [{ method: mode, namespace, data }];
    default:
      return [];
  }
}

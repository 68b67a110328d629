// The shapes tests read from the server where the SDK types them loosely (`unknown` values,
// `DefaultValues`), so that tests need neither `any` nor double casts, and small readers that
// narrow `unknown` wire JSON to them (failing the test, with what was there, when it does not fit).

import assert from 'node:assert/strict';
import type { Message, Run, ThreadState } from '@langchain/langgraph-sdk';
import type { Cron } from '../internal/storage/crons.ts';

/** The values of a graph with a `messages` channel (every example graph), as wait and join answer them. */
export interface MessagesValues {
  messages: Message[];
}

/** What wait and join answer for a run that failed. */
export interface RunFailure {
  __error__: { error: string; message: string };
}

/** The JSON body of an error answer. */
export interface ErrorBody {
  message: string;
  code?: string;
  statusCode?: number;
}

/** A JSON object read off the wire; its fields are checked one by one. */
export type JsonObject = Record<string, unknown>;

/** A thread state as the state routes answer it on the wire: the SDK's shape plus the flat checkpoint ids. */
export interface WireState extends Omit<ThreadState<JsonObject>, 'metadata'> {
  metadata: JsonObject;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
}

/** What a run was created with, as the server keeps it (the SDK's `Run` leaves `kwargs` out). */
export interface RunKwargs {
  input?: unknown;
  command?: unknown;
  config: { configurable: JsonObject } & JsonObject;
  [key: string]: unknown;
}

/** `value` as a JSON object (not an array, not null); fails the test when it is anything else. */
export function asObject(value: unknown, what = 'value'): JsonObject {
  assert.ok(
    typeof value === 'object' && value !== null && !Array.isArray(value),
    `${what} is not an object: ${JSON.stringify(value)}`,
  );
  return value as JsonObject;
}

/** `value` as an array of JSON objects; fails the test when it is anything else. */
export function asObjects(value: unknown, what = 'value'): JsonObject[] {
  assert.ok(Array.isArray(value), `${what} is not an array: ${JSON.stringify(value)}`);
  return value.map((item, i) => asObject(item, `${what}[${i}]`));
}

/** `value` as a string; fails the test when it is anything else. */
export function asString(value: unknown, what = 'value'): string {
  assert.equal(typeof value, 'string', `${what} is not a string: ${JSON.stringify(value)}`);
  return value as string;
}

/** The messages of a run's or a state's values; fails the test when there is no `messages` list. */
export function messagesOf(values: unknown): Message[] {
  const messages = asObject(values, 'values').messages;
  assert.ok(Array.isArray(messages), `values have no messages list: ${JSON.stringify(values)}`);
  return messages as Message[];
}

/** The `kwargs` a run carries on the wire; fails the test when it has none. */
export function kwargsOf(run: Run): RunKwargs {
  const kwargs = (run as Run & { kwargs?: RunKwargs }).kwargs;
  assert.ok(kwargs?.config, `run ${run.run_id} has no kwargs.config: ${JSON.stringify(run)}`);
  return kwargs;
}

/**
 * `value` as a cron as the cron routes answer it (the SDK's create answers leave out `enabled`,
 * `timezone` and `on_run_completed`); fails the test when it is not one.
 */
export function asCron(value: unknown, what = 'cron'): Cron {
  assertCron(value, what);
  return value;
}

function assertCron(value: unknown, what: string): asserts value is Cron {
  const cron = asObject(value, what);
  asString(cron.cron_id, `${what}.cron_id`);
  asObject(cron.payload, `${what}.payload`);
  asObject(cron.metadata, `${what}.metadata`);
}

/** One line of a server's pino log, parsed, as tests that capture the log read it. */
export interface LogRecord {
  level: number;
  msg?: string;
  err?: { message: string; stack?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The `__error__` that wait and join answer for a failed run; fails the test when there is none. */
export function runErrorOf(values: unknown): RunFailure['__error__'] {
  const error = asObject(asObject(values, 'values').__error__, '__error__');
  return { error: asString(error.error, '__error__.error'), message: asString(error.message, '__error__.message') };
}

/** The first action request of a human-in-the-loop review request (what the `interrupt` graph raises). */
export function firstActionRequest(value: unknown): JsonObject {
  const [first] = asObjects(asObject(value, 'interrupt value').action_requests, 'action_requests');
  return asObject(first, 'action_requests[0]');
}

/** A JSON-RPC 2.0 error, as `/mcp` and `/a2a` answer it. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC 2.0 answer as `/mcp` and `/a2a` send it: the request's id, and a result or an error. */
export interface RpcAnswer<Result = unknown> {
  jsonrpc: '2.0';
  id?: string | number | null;
  result?: Result;
  error?: RpcError;
}

/** `value` as a JSON-RPC 2.0 answer whose result (when there is one) is a `Result`; fails the test when it is not one. */
export function asRpcAnswer<Result = unknown>(value: unknown, what = 'answer'): RpcAnswer<Result> {
  assertRpcAnswer<Result>(value, what);
  return value;
}

function assertRpcAnswer<Result>(value: unknown, what: string): asserts value is RpcAnswer<Result> {
  const answer = asObject(value, what);
  assert.equal(answer.jsonrpc, '2.0', `${what} is not a JSON-RPC 2.0 answer: ${JSON.stringify(value)}`);
}

/** The result of a JSON-RPC answer; fails the test, showing the answer, when it has none (an error answer). */
export function rpcResultOf<Result>(answer: RpcAnswer<Result>): Result {
  assert.ok(answer.result !== undefined, `expected a JSON-RPC result: ${JSON.stringify(answer)}`);
  return answer.result;
}

/** The error of a JSON-RPC answer; fails the test, showing the answer, when it has none. */
export function rpcErrorOf(answer: RpcAnswer): RpcError {
  assert.ok(answer.error !== undefined, `expected a JSON-RPC error: ${JSON.stringify(answer)}`);
  return answer.error;
}

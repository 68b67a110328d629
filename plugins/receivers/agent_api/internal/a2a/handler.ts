// One assistant as an Agent2Agent (A2A) agent. `@a2a-js/sdk` does the protocol: its JSON-RPC
// transport handlers validate the envelope, dispatch the methods, translate between the v0.3 wire
// format (`message/send`, ...) or the v1.0 one (`SendMessage`, ...) and its core types, and map
// errors to codes. This class is the `A2ARequestHandler` they dispatch to, over threads and runs
// instead of the SDK's own task store (which would duplicate what the database already holds):
//
// - `contextId` is the thread id (a UUID; minted when absent; an unknown one becomes a new thread);
//   a task is a run (task id = run id).
// - Text parts become `messages` entries (`user` → `human`, `agent` → `ai`); data parts' objects
//   are merged into the input; file parts are refused (-32005). Only graphs taking `messages` are
//   A2A agents (anything else is refused, -32602, with the graph's input fields).
// - A message naming a `taskId` whose run paused on an interrupt (`input-required`) resumes it:
//   its text (or its data part's object) is the resume value. A terminal task cannot take more
//   messages (-32004); send a new message with only `contextId` to continue the conversation.
// - States: pending → submitted, running → working, success → completed, error and timeout →
//   failed, interrupted (cancelled) → canceled; a run that ended with its graph paused on an
//   interrupt (its thread `interrupted`) → input-required while it is the thread's last run.

import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type {
  AgentCard,
  Artifact,
  CancelTaskRequest,
  GetTaskRequest,
  Message,
  Part,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskState,
} from '@a2a-js/sdk';
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { CodedError } from 'tracepipe/plugin';
import { AuthRefusal } from '../auth/custom.ts';
import type { RunCreate } from '../domain/runs.ts';
import { isoNow } from '../api/clock.ts';
import { authorizeRun, createRun } from '../http/access.ts';
import { contentText, finalAnswer, isAiMessage, messagesOf } from '../http/agent-calls.ts';
import type { AgentServices } from '../http/services.ts';
import type { Assistant, JsonObject, RunRecord } from '../storage/storage.ts';

// The SDK's enums are TypeScript enums; their numbers are the wire's (the protocol buffer values).
const STATE = { submitted: 1, working: 2, completed: 3, failed: 4, canceled: 5, inputRequired: 6 } as const;
const ROLE = { user: 1, agent: 2 } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const dataPart = (data: unknown): Part => ({
  content: { $case: 'data', value: data },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

function agentMessage(text: string, taskId: string, contextId: string, extra: Part[] = []): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: ROLE.agent as Message['role'],
    parts: [textPart(text), ...extra],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A LangChain message of the run's values as an A2A message. */
function toA2aMessage(message: unknown, taskId: string, contextId: string): Message {
  const record = isObject(message) ? message : {};
  const human = record.type === 'human' || record.role === 'user' || record.role === 'human';
  return {
    messageId: typeof record.id === 'string' ? record.id : randomUUID(),
    contextId,
    taskId,
    role: (human ? ROLE.user : ROLE.agent) as Message['role'],
    parts: [textPart(contentText(record.content))],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Describes a refusal of the run's creation as the A2A error a client understands. */
function a2aErrorOf(error: unknown): Error {
  if (error instanceof CodedError && error.statusCode < 500)
    return new RequestMalformedError(`Failed to create run: ${error.message}`);
  if (error instanceof AuthRefusal && error.statusCode < 500)
    return new RequestMalformedError(`Access denied to assistant or thread: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}

export class AssistantA2AHandler {
  constructor(
    private readonly services: AgentServices,
    private readonly request: FastifyRequest,
    private readonly assistant: Assistant,
    private readonly card: AgentCard,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError('This agent has no extended agent card.');
  }

  // --- message/send, message/stream -------------------------------------------------------------

  /** Checks the message and starts its run; returns the run and the incoming message. */
  private async start(params: SendMessageRequest, streaming: boolean): Promise<{ run: RunRecord; message: Message }> {
    const message = params.message;
    if (!message) throw new RequestMalformedError("Missing 'message' in params");
    if (message.parts.length === 0) throw new RequestMalformedError('Message must contain at least one part');
    const human = (message.role as number) !== ROLE.agent;
    const messages: JsonObject[] = [];
    const data: JsonObject = {};
    let resume: unknown;
    for (const part of message.parts) {
      const content = part.content;
      if (content?.$case === 'text') {
        messages.push({ role: human ? 'human' : 'ai', content: content.value });
        resume ??= content.value;
      } else if (content?.$case === 'data') {
        if (!isObject(content.value)) throw new RequestMalformedError('A data part must hold a JSON object');
        Object.assign(data, content.value);
        resume = content.value;
      } else {
        throw new ContentTypeNotSupportedError(
          `Unsupported part kind '${content?.$case === 'raw' || content?.$case === 'url' ? 'file' : 'unknown'}'. A2A agents support 'text' and 'data' parts only.`,
        );
      }
    }
    const contextId = message.contextId || randomUUID();
    if (!UUID.test(contextId)) throw new RequestMalformedError(`Invalid contextId '${contextId}': it must be a UUID`);
    let body: RunCreate;
    if (message.taskId) {
      const task = await this.run(message.taskId);
      if (task.thread_id !== contextId)
        throw new TaskNotFoundError(`Task '${message.taskId}' not found in context '${contextId}'`);
      if (this.stateOf(task, await this.waitsOnInterrupt(task)) !== STATE.inputRequired) {
        throw new UnsupportedOperationError(
          `Task '${task.run_id}' is ${task.status === 'pending' || task.status === 'running' ? 'still running' : 'in a terminal state'} and takes no more messages; send a new message with only contextId to continue the conversation`,
        );
      }
      body = { assistant_id: this.assistant.assistant_id, command: { resume } };
    } else {
      body = {
        assistant_id: this.assistant.assistant_id,
        input: { ...data, ...(messages.length ? { messages } : {}) },
      };
    }
    body.if_not_exists = 'create';
    body.multitask_strategy = 'enqueue';
    if (streaming) body.stream_mode = ['values', 'messages-tuple'];
    try {
      const run = await createRun(this.services, this.request, contextId, body);
      return { run, message: { ...message, contextId, taskId: run.run_id } };
    } catch (error) {
      throw a2aErrorOf(error);
    }
  }

  async sendMessage(params: SendMessageRequest): Promise<Task> {
    const { run } = await this.start(params, false);
    if (params.configuration?.returnImmediately) return this.taskOf(run, null);
    const controller = new AbortController();
    this.request.raw.on('close', () => controller.abort());
    await this.services.coordinator.waitFor(run.run_id, controller.signal);
    return this.taskOf(await this.run(run.run_id), await this.services.coordinator.result(run.run_id, run.thread_id));
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { run, message } = await this.start(params, true);
    const taskId = run.run_id;
    const contextId = run.thread_id;
    const status = (state: number, text?: string, extra: Part[] = []): StreamResponse => ({
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId,
          contextId,
          status: {
            state: state as TaskState,
            message: text === undefined ? undefined : agentMessage(text, taskId, contextId, extra),
            timestamp: isoNow(),
          },
          metadata: undefined,
        },
      },
    });
    yield {
      payload: {
        $case: 'task',
        value: {
          id: taskId,
          contextId,
          status: { state: STATE.submitted as TaskState, message: undefined, timestamp: isoNow() },
          artifacts: [],
          history: [message],
          metadata: undefined,
        },
      },
    };
    const controller = new AbortController();
    this.request.raw.on('close', () => controller.abort());
    const artifactId = randomUUID();
    let chunks = 0;
    let failure: { error?: string; message?: string } | undefined;
    for await (const event of this.services.broker.subscribe(taskId, -1, controller.signal)) {
      if (event.event === 'metadata') yield status(STATE.working);
      else if (event.event === 'error') failure = event.data as typeof failure;
      else if (event.event === 'messages' && Array.isArray(event.data)) {
        const [chunk] = event.data as [unknown];
        if (!isAiMessage(chunk) || !isObject(chunk)) continue;
        const text = contentText(chunk.content);
        if (text === '') continue;
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId,
              contextId,
              artifact: this.artifact(text, artifactId),
              append: chunks++ > 0,
              lastChunk: false,
              metadata: undefined,
            },
          },
        };
      }
    }
    if (controller.signal.aborted) return;
    const ended = await this.run(taskId);
    if (failure || ended.status === 'error' || ended.status === 'timeout') {
      const reason = failure ??
        ended.error ?? { error: ended.status, message: `the run ended with status ${ended.status}` };
      yield status(STATE.failed, `Error executing assistant: ${reason.error}: ${reason.message}`);
      return;
    }
    const values = await this.services.coordinator.result(taskId, contextId);
    const state = this.stateOf(ended, await this.waitsOnInterrupt(ended));
    if (state === STATE.inputRequired) {
      const interrupts = isObject(values) ? values.__interrupt__ : undefined;
      yield status(state, 'The assistant is waiting for input.', [dataPart({ interrupts })]);
    } else if (state === STATE.canceled) {
      yield status(state, 'The task was canceled.');
    } else {
      yield status(STATE.completed, finalAnswer(values));
    }
  }

  // --- tasks/get, tasks/cancel ------------------------------------------------------------------

  /** The run of the task, if the caller may see it and it belongs to this assistant. */
  private async run(taskId: string): Promise<RunRecord> {
    const missing = () => new TaskNotFoundError(`Task '${taskId}' not found`);
    if (!UUID.test(taskId)) throw missing();
    try {
      const run =
        (await authorizeRun(this.services, this.request, 'threads:read', undefined, taskId)) ??
        (await this.services.runs.get(undefined, taskId));
      if (run.assistant_id !== this.assistant.assistant_id) throw missing();
      return run;
    } catch (error) {
      if (error instanceof CodedError && error.statusCode === 404) throw missing();
      throw error;
    }
  }

  /** A run that ended with its graph paused on an interrupt (its thread waits for the answer). */
  private async waitsOnInterrupt(run: RunRecord): Promise<boolean> {
    return this.services.runs.endedOnInterrupt(run);
  }

  private stateOf(run: RunRecord, waitsOnInterrupt: boolean): number {
    switch (run.status) {
      case 'pending':
        return STATE.submitted;
      case 'running':
        return STATE.working;
      case 'success':
        return waitsOnInterrupt ? STATE.inputRequired : STATE.completed;
      case 'error':
      case 'timeout':
        return STATE.failed;
      case 'interrupted':
        return STATE.canceled;
    }
  }

  private artifact(text: string, artifactId = randomUUID()): Artifact {
    return {
      artifactId,
      name: 'Assistant Response',
      description: `Response from assistant ${this.assistant.assistant_id}`,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
    };
  }

  /** The task of a run; `values` are its final values (null: not known, e.g. still running). */
  private async taskOf(run: RunRecord, values: unknown, historyLength?: number): Promise<Task> {
    const state = this.stateOf(run, await this.waitsOnInterrupt(run));
    const taskId = run.run_id;
    const contextId = run.thread_id;
    let history = messagesOf(values).map((message) => toA2aMessage(message, taskId, contextId));
    if (historyLength !== undefined) history = historyLength === 0 ? [] : history.slice(-historyLength);
    const failure = isObject(values) && isObject(values.__error__) ? values.__error__ : (run.error ?? undefined);
    const message =
      state === STATE.failed
        ? agentMessage(
            `Error executing assistant: ${failure ? `${String(failure.error)}: ${String(failure.message)}` : run.status}`,
            taskId,
            contextId,
          )
        : state === STATE.inputRequired
          ? agentMessage('The assistant is waiting for input.', taskId, contextId, [
              dataPart({ interrupts: isObject(values) ? values.__interrupt__ : undefined }),
            ])
          : undefined;
    return {
      id: taskId,
      contextId,
      status: { state: state as TaskState, message, timestamp: run.updated_at },
      artifacts: state === STATE.completed && values !== null ? [this.artifact(finalAnswer(values))] : [],
      history,
      metadata: undefined,
    };
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    const run = await this.run(params.id);
    const done = run.status !== 'pending' && run.status !== 'running';
    const values = done ? await this.services.coordinator.result(run.run_id, run.thread_id) : null;
    if (params.historyLength !== undefined && params.historyLength < 0)
      throw new RequestMalformedError('historyLength must be an integer >= 0');
    return this.taskOf(run, values, params.historyLength);
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const run = await this.run(params.id);
    if (run.status !== 'pending' && run.status !== 'running')
      throw new TaskNotCancelableError(`Task '${run.run_id}' has already ended (${run.status})`);
    await authorizeRun(this.services, this.request, 'threads:update', run.thread_id, run.run_id, {
      thread_id: run.thread_id,
      action: 'interrupt',
    });
    await this.services.runs.cancel(undefined, run.run_id, 'interrupt', true);
    return this.taskOf(await this.run(run.run_id), null);
  }

  // --- not supported ----------------------------------------------------------------------------

  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError(
      'Push notifications are not supported; use message/stream or tasks/get.',
    );
  }
  async getTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
  async deleteTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
  async *resubscribe(): AsyncGenerator<StreamResponse, void, undefined> {
    throw new UnsupportedOperationError('Resubscribing to a task is not supported; use tasks/get.');
  }
  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError('Listing tasks is not supported; use tasks/get.');
  }
}

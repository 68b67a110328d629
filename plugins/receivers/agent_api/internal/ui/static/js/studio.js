// @ts-check
// The Studio screen: pick an assistant (the last one used is remembered), browse its threads or
// start one, send a message and watch the run stream (answer, tool calls, node updates, the graph
// lighting up), answer interrupts in place, and travel back: fork from any checkpoint or edit the
// state as a node. This module holds the page's wiring; its state lives in one reducer
// (studio-state.js) and each panel in a module of its own.

import { useCallback, useEffect, useReducer, useRef } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { api } from './api.js';
import { parseJsonObject } from './json-object.js';
import { isSystemAssistant, shortId } from './format.js';
import { mergeMessages } from './messages.js';
import { href, navigate } from './route.js';
import { ConfigForm } from './studio-config.js';
import { DebugSettingsForm, OtherEventsPanel } from './studio-debug.js';
import { GraphView } from './studio-graph.js';
import { CheckpointHistory, RunHistory } from './studio-history.js';
import { InterruptPanel } from './studio-interrupt.js';
import { Conversation, RunPanel, UpdatesPanel } from './studio-panels.js';
import { streamRun } from './studio-run.js';
import { StatePanel } from './studio-state-editor.js';
import {
  DEFAULT_STREAM_MODES,
  initialState,
  lastAssistant,
  pausedBefore,
  pendingInterrupts,
  rememberAssistant,
  startingAssistant,
  studioReducer,
} from './studio-state.js';
import { ThreadBrowser, offeredThreads } from './studio-threads.js';

/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */
/** @typedef {import('./types.js').JsonObject} JsonObject */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').RunStreamBody} RunStreamBody */
/** @typedef {import('./types.js').ThreadState} ThreadState */

/** @param {unknown} failure */
const messageOf = (failure) => /** @type {Error} */ (failure)?.message ?? String(failure);

/**
 * What a run starts from: new input (with the user's message shown at once), a command resuming
 * an interrupt, or nothing (continue from a breakpoint); `checkpointId` forks the thread there.
 * @typedef {object} RunRequest
 * @property {string} label Shown as the run's input.
 * @property {JsonObject | null} [input]
 * @property {{ resume: unknown }} [command]
 * @property {Message} [userMessage]
 * @property {string} [checkpointId]
 * @property {string} [threadId] The thread, when it was just created.
 */

/**
 * @param {{
 *   initialAssistantId: string | undefined,
 *   initialThreadId?: string,
 *   announce: import('./types.js').Announce,
 * }} props `initialThreadId`: a link naming a thread (`#/studio/<assistant>/<thread>`) opens it.
 */
export function StudioPage({ initialAssistantId, initialThreadId, announce }) {
  const [state, dispatch] = useReducer(studioReducer, initialAssistantId ?? '', initialState);
  const abort = useRef(/** @type {AbortController | null} */ (null));
  // Whether the user chose the assistant (a link naming it, or the list), rather than the studio.
  const chosen = useRef(Boolean(initialAssistantId));
  const { assistants, assistantId, threadId, threadState, streaming, run, debug } = state;

  useEffect(() => () => abort.current?.abort(), []);

  // The assistants, and the one to open when the link names none.
  useEffect(() => {
    api
      .pageConfig()
      .then((config) => dispatch({ type: 'pageConfigLoaded', traceExplorerUrl: config.trace_explorer_url }));
    Promise.all([api.searchAssistants({ limit: 1000 }), api.info().catch(() => null)]).then(
      ([found, info]) => {
        dispatch({ type: 'assistantsLoaded', assistants: found });
        if (!initialAssistantId) {
          const graphs = Array.isArray(info?.graphs) ? info.graphs : [];
          dispatch({ type: 'assistantChosen', assistantId: startingAssistant(found, graphs, lastAssistant()) });
        }
      },
      (failure) => dispatch({ type: 'errorShown', error: messageOf(failure) }),
    );
  }, []);

  useEffect(() => {
    if (!initialAssistantId) return;
    chosen.current = true;
    dispatch({ type: 'assistantChosen', assistantId: initialAssistantId });
  }, [initialAssistantId]);

  // A link may name the assistant by graph id (as the API allows) or name one beyond the list:
  // ask the API which assistant it is.
  useEffect(() => {
    if (!assistantId || assistants.length === 0 || assistants.some((a) => a.assistant_id === assistantId)) return;
    api.getAssistant(assistantId).then(
      (found) => dispatch({ type: 'assistantFound', assistant: found }),
      (failure) => dispatch({ type: 'errorShown', error: messageOf(failure) }),
    );
  }, [assistantId, assistants]);

  const selected = assistants.find((assistant) => assistant.assistant_id === assistantId);
  const graphId = selected?.graph_id;

  // The chosen assistant: remembered when the user chose it (by link or in the list), its graph
  // drawn, its context in the configuration form.
  useEffect(() => {
    if (!selected) return;
    if (chosen.current) rememberAssistant(selected.assistant_id);
    dispatch({ type: 'contextChanged', context: { ...selected.context } });
    api.assistantGraph(selected.assistant_id).then(
      (graph) => dispatch({ type: 'graphLoaded', graph }),
      () => dispatch({ type: 'graphLoaded', graph: { nodes: [], edges: [] } }),
    );
  }, [selected?.assistant_id, selected?.version]);

  const loadThreads = useCallback(async () => {
    try {
      const threads = await api.searchThreads({ limit: 100, sort_by: 'updated_at', sort_order: 'desc' });
      dispatch({ type: 'threadsLoaded', threads });
    } catch (failure) {
      dispatch({ type: 'errorShown', error: messageOf(failure) });
    }
  }, []);
  useEffect(() => {
    loadThreads();
  }, [loadThreads]);

  /**
   * Reads a thread's state, checkpoints and runs.
   * @param {string} id
   * @returns {Promise<ThreadState | null>}
   */
  const loadThread = useCallback(async (/** @type {string} */ id) => {
    if (!id) return null;
    try {
      const [current, history, runs] = await Promise.all([
        api.threadState(id),
        api.threadHistory(id),
        api.listRuns(id),
      ]);
      // Newest first, whatever order the server lists them in.
      runs.sort((a, b) => String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')));
      dispatch({ type: 'threadStateLoaded', state: current, history, runs });
      return current;
    } catch (failure) {
      dispatch({ type: 'errorShown', error: messageOf(failure) });
      return null;
    }
  }, []);

  /** @param {string} id '' for none. */
  const openThread = (id) => {
    dispatch({ type: 'threadOpened', threadId: id });
    loadThread(id);
  };

  // A link naming a thread opens it, as choosing it in the thread browser does.
  useEffect(() => {
    if (initialThreadId && initialThreadId !== threadId && !streaming) openThread(initialThreadId);
  }, [initialThreadId]);

  // A thread's state is shaped by the graph that ran on it, so switching to another graph leaves
  // a thread of the previous one.
  useEffect(() => {
    const current = state.threads.find((thread) => thread.thread_id === threadId);
    if (graphId && current?.metadata?.graph_id && current.metadata.graph_id !== graphId && !streaming) openThread('');
  }, [graphId]);

  const newThread = async () => {
    dispatch({ type: 'errorShown', error: '' });
    try {
      const thread = await api.createThread({});
      dispatch({ type: 'threadOpened', threadId: thread.thread_id });
      await loadThreads();
      announce(`Started thread ${shortId(thread.thread_id)}.`);
      return thread.thread_id;
    } catch (failure) {
      dispatch({ type: 'errorShown', error: messageOf(failure) });
      return null;
    }
  };

  /** @param {RunRequest} request */
  const execute = async (request) => {
    const target = request.threadId ?? threadId;
    if (!target || !assistantId) return;
    /** @type {RunStreamBody} */
    const body = {
      assistant_id: assistantId,
      stream_mode: debug.streamModes.length > 0 ? debug.streamModes : DEFAULT_STREAM_MODES,
    };
    if (request.input !== undefined) body.input = request.input;
    if (request.command) body.command = request.command;
    if (request.checkpointId) body.checkpoint_id = request.checkpointId;
    if (Object.keys(state.context).length > 0) body.context = state.context;
    if (debug.interruptBefore.length > 0) body.interrupt_before = debug.interruptBefore;
    if (debug.interruptAfter.length > 0) body.interrupt_after = debug.interruptAfter;
    dispatch({ type: 'runStarted', input: request.label, userMessage: request.userMessage });
    const controller = (abort.current = new AbortController());
    try {
      const runId = await streamRun(target, body, dispatch, controller.signal);
      if (runId) {
        const finished = await api.getRun(target, runId).catch(() => null);
        if (finished) dispatch({ type: 'runFinished', status: finished.status });
        const after = await loadThread(target);
        // The token stream is not read aloud as it arrives; the outcome is.
        if (pendingInterrupts(after).length > 0) announce('The run paused: it waits for your answer.');
        else if (pausedBefore(after).length) announce(`The run paused before ${pausedBefore(after).join(', ')}.`);
        else if (finished) announce(`Run finished: ${finished.status}.`);
      } else await loadThread(target);
    } catch (failure) {
      if (/** @type {Error | undefined} */ (failure)?.name !== 'AbortError') {
        dispatch({ type: 'runFailed', error: messageOf(failure) });
      }
      await loadThread(target);
    } finally {
      abort.current = null;
      dispatch({ type: 'streamEnded' });
      loadThreads();
    }
  };

  /** @param {Event} event A submit, or the Enter key in the message box. */
  const send = async (event) => {
    event.preventDefault();
    const text = state.draft.trim();
    if (!text || streaming) return;
    if (!assistantId) {
      dispatch({ type: 'errorShown', error: 'Choose an assistant first.' });
      return;
    }
    const extra = parseJsonObject(state.extraInput);
    if (extra.error !== undefined) {
      dispatch({ type: 'extraInputRefused', error: extra.error });
      const field = /** @type {HTMLTextAreaElement} */ (document.getElementById('studio-extra-input'));
      /** @type {HTMLDetailsElement} */ (field.closest('details')).open = true;
      field.focus();
      return;
    }
    const target = threadId || (await newThread());
    if (!target) return;
    const fork = state.fork;
    await execute({
      threadId: target,
      label: fork ? `${text} (fork from step ${fork.step ?? '?'})` : text,
      input: { ...extra.value, messages: [{ role: 'user', content: text }] },
      userMessage: { id: `local-${Date.now()}`, type: 'human', content: text },
      checkpointId: fork?.checkpointId,
    });
  };

  /** @param {unknown} value @param {string} label */
  const resume = (value, label) => execute({ label, command: { resume: value } });
  const continueRun = () => execute({ label: 'continue', input: null });

  const cancel = async () => {
    if (!run?.id || !threadId) return;
    try {
      await api.cancelRun(threadId, run.id);
      announce('Cancelling the run…');
    } catch (failure) {
      dispatch({ type: 'runFailed', error: messageOf(failure) });
    }
  };

  /** @param {ThreadState} checkpoint */
  const forkFrom = (checkpoint) => {
    const checkpointId = checkpoint.checkpoint?.checkpoint_id ?? checkpoint.checkpoint_id;
    if (!checkpointId) return;
    const step = checkpoint.metadata?.step;
    dispatch({ type: 'forkChosen', fork: { checkpointId, step } });
    announce(`The next message forks the thread from step ${step ?? '?'}.`);
    document.getElementById('studio-message')?.focus();
  };

  /** @param {ThreadState} checkpoint */
  const editAt = (checkpoint) => {
    const checkpointId = checkpoint.checkpoint?.checkpoint_id ?? checkpoint.checkpoint_id;
    const current = state.history[0];
    const isCurrent = checkpointId === (current?.checkpoint?.checkpoint_id ?? current?.checkpoint_id);
    dispatch({
      type: 'stateEditChosen',
      edit: isCurrent
        ? { values: checkpoint.values }
        : { checkpointId, step: checkpoint.metadata?.step, values: checkpoint.values },
    });
    requestAnimationFrame(() => document.getElementById('state-values')?.focus());
  };

  /** @param {{ values: JsonObject, asNode: string, checkpointId?: string }} update */
  const saveState = async ({ values, asNode, checkpointId }) => {
    try {
      await api.updateState(threadId, {
        values,
        ...(asNode ? { as_node: asNode } : {}),
        ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
      });
      dispatch({ type: 'stateEditChosen', edit: null });
      await loadThread(threadId);
      loadThreads();
      announce(checkpointId ? 'Saved the state: the thread continues from the edited checkpoint.' : 'Saved the state.');
    } catch (failure) {
      dispatch({ type: 'errorShown', error: messageOf(failure) });
    }
  };

  /** @param {KeyboardEvent} event */
  const onKeyDown = (event) => {
    // Enter sends; Shift+Enter starts a new line, as in most chat tools.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) send(event);
  };

  const messages = mergeMessages(state.stateMessages, state.streamed);
  const threads = offeredThreads(state.threads, graphId, state.threadQuery);
  const nodes = (state.graph?.nodes ?? []).map((node) => node.id).filter((id) => !id.startsWith('__'));
  const interrupts = streaming ? [] : pendingInterrupts(threadState);
  const next = streaming ? [] : (threadState?.next ?? []);

  return html`
    <div class="studio">
      <aside class="studio-side" aria-label="Assistant and threads">
        <h1>Studio</h1>
        <div class="field">
          <label for="studio-assistant">Assistant</label>
          <select id="studio-assistant" value=${assistantId} onChange=${(/** @type {FieldEvent} */ e) => {
            chosen.current = true;
            dispatch({ type: 'assistantChosen', assistantId: e.currentTarget.value });
            navigate(href.studio(e.currentTarget.value));
          }}>
            ${assistants.length === 0 && html`<option value="">No assistants</option>`}
            ${assistants.map((a) => html`<option value=${a.assistant_id}>${a.name}${isSystemAssistant(a) ? '' : ` (${a.graph_id}, v${a.version})`}</option>`)}
          </select>
          ${selected && html`<p class="hint">Graph <code>${selected.graph_id}</code>, version ${selected.version}. <a href=${href.assistant(selected.assistant_id)}>Edit</a></p>`}
        </div>
        <${ThreadBrowser} threads=${threads} threadId=${threadId} query=${state.threadQuery} busy=${streaming}
          onQuery=${(/** @type {string} */ query) => dispatch({ type: 'threadQueryChanged', query })}
          onOpen=${openThread} onNew=${newThread} />
        ${threadId && html`<p class="hint">Thread <code data-testid="thread-id">${threadId}</code></p>`}
        <details class="side-section" open>
          <summary>Graph</summary>
          <${GraphView} drawing=${state.graph} active=${streaming ? run?.node : undefined} next=${next} />
        </details>
        <details class="side-section">
          <summary>Configuration</summary>
          <${ConfigForm} assistantId=${selected?.assistant_id ?? ''} context=${state.context}
            onChange=${(/** @type {JsonObject} */ context) => dispatch({ type: 'contextChanged', context })} />
        </details>
        <details class="side-section">
          <summary>Debug</summary>
          <${DebugSettingsForm} debug=${debug} nodes=${nodes}
            onChange=${(/** @type {import('./studio-state.js').DebugSettings} */ settings) => dispatch({ type: 'debugChanged', debug: settings })} />
        </details>
      </aside>
      <section class="studio-chat" aria-labelledby="chat-title">
        <h2 id="chat-title" class="visually-hidden">Conversation</h2>
        ${state.error && html`<div class="error-banner" role="alert">${state.error}</div>`}
        <div class="chat-log" aria-busy=${streaming ? 'true' : 'false'}>
          <${Conversation} messages=${messages} streaming=${streaming} hasState=${Boolean(threadState?.checkpoint || threadState?.metadata)} />
        </div>
        <${InterruptPanel} interrupts=${interrupts} next=${streaming ? [] : pausedBefore(threadState)} busy=${streaming} onResume=${resume} onContinue=${continueRun} />
        <form class="composer" onSubmit=${send}>
          ${
            state.fork &&
            html`<div class="fork-banner" role="note">
            Forking from step ${state.fork.step ?? '?'}: the next message starts a new branch of the thread there.
            <button type="button" class="secondary small" onClick=${() => dispatch({ type: 'forkChosen', fork: null })}>Cancel fork</button>
          </div>`
          }
          <label for="studio-message" class="visually-hidden">Message</label>
          <textarea id="studio-message" rows="3" placeholder=${interrupts.length ? 'The run waits for the answer above; a message starts a new run' : 'Write a message — Enter sends, Shift+Enter adds a line'}
            value=${state.draft} onInput=${(/** @type {FieldEvent} */ e) => dispatch({ type: 'draftChanged', draft: e.currentTarget.value })} onKeyDown=${onKeyDown}></textarea>
          <details class="extra-input">
            <summary>More input</summary>
            <div class=${`field${state.extraError ? ' invalid' : ''}`}>
              <label for="studio-extra-input">Other input keys (JSON object, sent beside the message)</label>
              <textarea id="studio-extra-input" class="code" rows="2" spellcheck="false" placeholder='{"delay_ms": 2000}'
                value=${state.extraInput} onInput=${(/** @type {FieldEvent} */ e) => {
                  const text = e.currentTarget.value;
                  dispatch({
                    type: 'extraInputChanged',
                    text,
                    error: state.extraError ? (parseJsonObject(text).error ?? '') : '',
                  });
                }}
                aria-invalid=${state.extraError ? 'true' : undefined} aria-describedby=${state.extraError ? 'studio-extra-input-error' : undefined}></textarea>
              ${state.extraError && html`<p class="field-error" id="studio-extra-input-error">${state.extraError}</p>`}
            </div>
          </details>
          <div class="actions">
            ${streaming && html`<button type="button" class="danger" onClick=${cancel} disabled=${!run?.id}>Cancel run</button>`}
            <button type="submit" disabled=${streaming || !state.draft.trim()}>${streaming ? 'Running…' : 'Send'}</button>
          </div>
        </form>
      </section>
      <aside class="studio-inspect" aria-label="Run details">
        <${RunPanel} run=${run} traceExplorerUrl=${state.traceExplorerUrl} waiting=${interrupts.length > 0} />
        <${UpdatesPanel} updates=${state.updates} />
        <${OtherEventsPanel} events=${state.otherEvents} />
        <${StatePanel} state=${threadState} edit=${state.stateEdit} nodes=${nodes} busy=${streaming}
          onRefresh=${threadId ? () => loadThread(threadId) : null} onSave=${saveState}
          onCancelEdit=${() => dispatch({ type: 'stateEditChosen', edit: null })} />
        <${RunHistory} runs=${state.runs} traceExplorerUrl=${state.traceExplorerUrl} />
        <${CheckpointHistory} history=${state.history} forkFrom=${state.fork?.checkpointId} busy=${streaming || !threadId}
          onFork=${forkFrom} onEdit=${editAt} />
      </aside>
    </div>`;
}

// @ts-check
// The Studio screen: pick an assistant and a thread (or start one), send a message, and watch the
// run: the answer streams token by token (`messages-tuple`), node updates arrive as they happen
// (`updates`), the state follows (`values`), then the run's final status and the thread state
// are read back from the API.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { parseJsonObject } from './json-object.js';
import { formatShortTime, isSystemAssistant, shortId } from './format.js';
import { html } from './html.js';
import { addChunk, mergeMessages } from './messages.js';
import { href, navigate } from './route.js';
import { readSse } from './sse.js';
import { Conversation, RunPanel, StatePanel, UpdatesPanel } from './studio-panels.js';

/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./html.js').FieldEvent} FieldEvent */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').NodeUpdate} NodeUpdate */
/** @typedef {import('./types.js').RunView} RunView */
/** @typedef {import('./types.js').StreamedMessage} StreamedMessage */
/** @typedef {import('./types.js').Thread} Thread */
/** @typedef {import('./types.js').ThreadState} ThreadState */

const STREAM_MODES = ['messages-tuple', 'values', 'updates'];

/**
 * @param {{ initialAssistantId: string | undefined, announce: import('./types.js').Announce }} props
 */
export function StudioPage({ initialAssistantId, announce }) {
  const [assistants, setAssistants] = useState(/** @type {Assistant[]} */ ([]));
  const [assistantId, setAssistantId] = useState(initialAssistantId ?? '');
  const [threads, setThreads] = useState(/** @type {Thread[]} */ ([]));
  const [threadId, setThreadId] = useState('');
  const [threadState, setThreadState] = useState(/** @type {ThreadState | null} */ (null));
  const [stateMessages, setStateMessages] = useState(/** @type {Message[]} */ ([]));
  const [streamed, setStreamed] = useState(/** @type {StreamedMessage[]} */ ([]));
  const [updates, setUpdates] = useState(/** @type {NodeUpdate[]} */ ([]));
  const [run, setRun] = useState(/** @type {RunView | null} */ (null));
  const [draft, setDraft] = useState('');
  // Input keys besides the message, for graphs whose state has more than `messages`.
  const [extraInput, setExtraInput] = useState('');
  const [extraError, setExtraError] = useState('');
  const [error, setError] = useState('');
  const [streaming, setStreaming] = useState(false);
  const abort = useRef(/** @type {AbortController | null} */ (null));

  useEffect(() => () => abort.current?.abort(), []);

  useEffect(() => {
    api.searchAssistants({ limit: 1000 }).then(
      (found) => {
        setAssistants(found);
        setAssistantId(
          (current) => current || found.find(isSystemAssistant)?.assistant_id || found[0]?.assistant_id || '',
        );
      },
      (failure) => setError(failure.message),
    );
  }, []);

  useEffect(() => {
    if (initialAssistantId) setAssistantId(initialAssistantId);
  }, [initialAssistantId]);

  // A link may name the assistant by graph id (as the API allows) or name one beyond the list:
  // ask the API which assistant it is.
  useEffect(() => {
    if (!assistantId || assistants.length === 0 || assistants.some((a) => a.assistant_id === assistantId)) return;
    api.getAssistant(assistantId).then(
      (found) => {
        setAssistants((current) =>
          current.some((a) => a.assistant_id === found.assistant_id) ? current : [...current, found],
        );
        setAssistantId(found.assistant_id);
      },
      (failure) => setError(failure.message),
    );
  }, [assistantId, assistants]);

  const loadThreads = useCallback(async () => {
    try {
      setThreads(await api.searchThreads({ limit: 50, sort_by: 'updated_at', sort_order: 'desc' }));
    } catch (failure) {
      setError(/** @type {Error} */ (failure).message);
    }
  }, []);
  useEffect(() => {
    loadThreads();
  }, [loadThreads]);

  const loadState = useCallback(async (/** @type {string} */ id) => {
    if (!id) return;
    try {
      const state = await api.threadState(id);
      setThreadState(state);
      setStateMessages(Array.isArray(state?.values?.messages) ? state.values.messages : []);
    } catch (failure) {
      setError(/** @type {Error} */ (failure).message);
    }
  }, []);

  /**
   * Shows thread `id`; `load: false` for a thread just created, which has no state to read.
   * @param {string} id
   * @param {{ load?: boolean }} [options]
   */
  const pickThread = (id, { load = true } = {}) => {
    setThreadId(id);
    setStreamed([]);
    setUpdates([]);
    setRun(null);
    setThreadState(null);
    setStateMessages([]);
    setError('');
    if (load) loadState(id);
  };

  const newThread = async () => {
    setError('');
    try {
      const thread = await api.createThread({});
      await loadThreads();
      pickThread(thread.thread_id, { load: false });
      announce(`Started thread ${shortId(thread.thread_id)}.`);
      return thread.thread_id;
    } catch (failure) {
      setError(/** @type {Error} */ (failure).message);
      return null;
    }
  };

  /** @param {Event} event A submit, or the Enter key in the message box. */
  const send = async (event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || streaming) return;
    if (!assistantId) {
      setError('Choose an assistant first.');
      return;
    }
    const extra = parseJsonObject(extraInput);
    setExtraError(extra.error ?? '');
    if (extra.error) {
      const field = /** @type {HTMLTextAreaElement} */ (document.getElementById('studio-extra-input'));
      /** @type {HTMLDetailsElement} */ (field.closest('details')).open = true;
      field.focus();
      return;
    }
    setError('');
    const target = threadId || (await newThread());
    if (!target) return;
    /** @type {Message} */
    const userMessage = { id: `local-${Date.now()}`, type: 'human', content: text };
    setStateMessages((current) => [...current, userMessage]);
    setStreamed([]);
    setUpdates([]);
    setDraft('');
    setRun({ status: 'pending', input: text });
    setStreaming(true);
    const controller = (abort.current = new AbortController());
    /** @type {string | undefined} */
    let runId;
    try {
      const response = await api.streamRun(
        target,
        {
          assistant_id: assistantId,
          input: { ...extra.value, messages: [{ role: 'user', content: text }] },
          stream_mode: STREAM_MODES,
        },
        controller.signal,
      );
      await readSse(response, ({ event: name, data }) => {
        if (name === 'metadata') {
          runId = /** @type {{ run_id?: string } | null} */ (data)?.run_id;
          setRun((current) => ({ input: current?.input, id: runId, status: 'running' }));
        } else if (name === 'messages' && Array.isArray(data)) {
          setStreamed((current) => addChunk(current, data[0]));
          setRun((current) => ({ ...current, chunks: (current?.chunks ?? 0) + 1 }));
        } else if (name === 'values' && Array.isArray(/** @type {{ messages?: unknown } | null} */ (data)?.messages)) {
          setStateMessages(/** @type {{ messages: Message[] }} */ (data).messages);
        } else if (name === 'updates' && data && typeof data === 'object') {
          setUpdates((current) => [...current, ...Object.entries(data).map(([node, value]) => ({ node, value }))]);
        } else if (name === 'error') {
          const problem = /** @type {{ error?: string, message?: string } | null} */ (data);
          const message =
            typeof data === 'string' ? data : [problem?.error, problem?.message].filter(Boolean).join(': ');
          setRun((current) => ({ ...current, status: 'error', error: message || 'The run failed.' }));
        }
      });
      if (runId) {
        const finished = await api.getRun(target, runId).catch(() => null);
        if (finished) {
          setRun((current) => ({ ...current, id: runId, status: finished.status }));
          // The token stream is not read aloud as it arrives; the outcome is.
          announce(`Run finished: ${finished.status}.`);
        }
      }
    } catch (failure) {
      if (/** @type {Error | undefined} */ (failure)?.name !== 'AbortError') {
        setRun((current) => ({
          ...current,
          status: current?.id ? 'error' : 'not started',
          error: /** @type {Error} */ (failure).message,
        }));
      }
    } finally {
      setStreaming(false);
      abort.current = null;
      await loadState(target);
      setStreamed([]);
      loadThreads();
    }
  };

  const cancel = async () => {
    if (!run?.id || !threadId) return;
    try {
      await api.cancelRun(threadId, run.id);
      announce('Cancelling the run…');
    } catch (failure) {
      setRun((current) => ({ ...current, error: /** @type {Error} */ (failure).message }));
    }
  };

  /** @param {KeyboardEvent} event */
  const onKeyDown = (event) => {
    // Enter sends; Shift+Enter starts a new line, as in most chat tools.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) send(event);
  };

  const selected = assistants.find((assistant) => assistant.assistant_id === assistantId);
  const messages = mergeMessages(stateMessages, streamed);
  // A thread's state is shaped by the graph that ran on it, so only threads of the chosen
  // assistant's graph (or never run) are offered, and switching graphs leaves the current thread.
  const graphId = selected?.graph_id;
  /** @param {Thread} thread */
  const fitsGraph = (thread) => !thread.metadata?.graph_id || thread.metadata.graph_id === graphId;
  const offeredThreads = threads.filter(fitsGraph);
  useEffect(() => {
    const current = threads.find((thread) => thread.thread_id === threadId);
    if (graphId && current && !fitsGraph(current) && !streaming) pickThread('');
  }, [graphId]);

  return html`
    <div class="studio">
      <aside class="studio-side" aria-label="Assistant and thread">
        <h1>Studio</h1>
        <div class="field">
          <label for="studio-assistant">Assistant</label>
          <select id="studio-assistant" value=${assistantId} onChange=${(/** @type {FieldEvent} */ e) => {
            setAssistantId(e.currentTarget.value);
            navigate(href.studio(e.currentTarget.value));
          }}>
            ${assistants.length === 0 && html`<option value="">No assistants</option>`}
            ${assistants.map((a) => html`<option value=${a.assistant_id}>${a.name}${isSystemAssistant(a) ? '' : ` (${a.graph_id}, v${a.version})`}</option>`)}
          </select>
          ${selected && html`<p class="hint">Graph <code>${selected.graph_id}</code>, version ${selected.version}. <a href=${href.assistant(selected.assistant_id)}>Edit</a></p>`}
        </div>
        <div class="field">
          <label for="studio-thread">Thread</label>
          <select id="studio-thread" value=${threadId} onChange=${(/** @type {FieldEvent} */ e) => pickThread(e.currentTarget.value)}>
            <option value="">New thread on first message</option>
            ${offeredThreads.map((t) => html`<option value=${t.thread_id}>${shortId(t.thread_id)} · ${t.status} · ${formatShortTime(t.updated_at)}</option>`)}
          </select>
        </div>
        <button type="button" class="secondary" onClick=${newThread} disabled=${streaming}>New thread</button>
        ${threadId && html`<p class="hint">Thread <code data-testid="thread-id">${threadId}</code></p>`}
      </aside>
      <section class="studio-chat" aria-labelledby="chat-title">
        <h2 id="chat-title" class="visually-hidden">Conversation</h2>
        ${error && html`<div class="error-banner" role="alert">${error}</div>`}
        <div class="chat-log" aria-busy=${streaming ? 'true' : 'false'}>
          <${Conversation} messages=${messages} streaming=${streaming} hasState=${Boolean(threadState?.checkpoint || threadState?.metadata)} />
        </div>
        <form class="composer" onSubmit=${send}>
          <label for="studio-message" class="visually-hidden">Message</label>
          <textarea id="studio-message" rows="3" placeholder="Write a message — Enter sends, Shift+Enter adds a line"
            value=${draft} onInput=${(/** @type {FieldEvent} */ e) => setDraft(e.currentTarget.value)} onKeyDown=${onKeyDown}></textarea>
          <details class="extra-input">
            <summary>More input</summary>
            <div class=${`field${extraError ? ' invalid' : ''}`}>
              <label for="studio-extra-input">Other input keys (JSON object, sent beside the message)</label>
              <textarea id="studio-extra-input" class="code" rows="2" spellcheck="false" placeholder='{"delay_ms": 2000}'
                value=${extraInput} onInput=${(/** @type {FieldEvent} */ e) => {
                  setExtraInput(e.currentTarget.value);
                  if (extraError) setExtraError(parseJsonObject(e.currentTarget.value).error ?? '');
                }}
                aria-invalid=${extraError ? 'true' : undefined} aria-describedby=${extraError ? 'studio-extra-input-error' : undefined}></textarea>
              ${extraError && html`<p class="field-error" id="studio-extra-input-error">${extraError}</p>`}
            </div>
          </details>
          <div class="actions">
            ${streaming && html`<button type="button" class="danger" onClick=${cancel} disabled=${!run?.id}>Cancel run</button>`}
            <button type="submit" disabled=${streaming || !draft.trim()}>${streaming ? 'Running…' : 'Send'}</button>
          </div>
        </form>
      </section>
      <aside class="studio-inspect" aria-label="Run details">
        <${RunPanel} run=${run} />
        <${UpdatesPanel} updates=${updates} />
        <${StatePanel} state=${threadState} onRefresh=${threadId ? () => loadState(threadId) : null} />
      </aside>
    </div>`;
}

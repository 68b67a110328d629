// @ts-check
// The studio's state in one reducer: what the page shows (assistants, threads, the open thread's
// state, checkpoints and runs, the current run as it streams) and what the user is composing
// (message, extra input, run context, debug settings, a checkpoint to fork from). Every change is
// a named action, so the page's behaviour reads as a list of events.

import { addChunk } from './messages.js';

/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./types.js').GraphDrawing} GraphDrawing */
/** @typedef {import('./types.js').JsonObject} JsonObject */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').NodeUpdate} NodeUpdate */
/** @typedef {import('./types.js').OtherEvent} OtherEvent */
/** @typedef {import('./types.js').Run} Run */
/** @typedef {import('./types.js').RunView} RunView */
/** @typedef {import('./types.js').StreamedMessage} StreamedMessage */
/** @typedef {import('./types.js').Thread} Thread */
/** @typedef {import('./types.js').ThreadState} ThreadState */

/** The stream modes a run asks for unless the debug settings say otherwise. */
export const DEFAULT_STREAM_MODES = ['messages-tuple', 'values', 'updates'];
/** Every stream mode the API offers, for the debug settings. */
export const STREAM_MODES = [
  'messages-tuple',
  'values',
  'updates',
  'debug',
  'tasks',
  'checkpoints',
  'custom',
  'events',
];

/**
 * @typedef {object} DebugSettings
 * @property {string[]} streamModes
 * @property {string[]} interruptBefore Nodes to pause before (`interrupt_before`).
 * @property {string[]} interruptAfter Nodes to pause after (`interrupt_after`).
 */

/**
 * A checkpoint the next run starts from (a fork of the thread), with its step for display.
 * @typedef {object} ForkPoint
 * @property {string} checkpointId
 * @property {number | undefined} step
 */

/**
 * @typedef {object} StudioState
 * @property {Assistant[]} assistants
 * @property {string} assistantId
 * @property {GraphDrawing | null} graph The chosen assistant's graph.
 * @property {Thread[]} threads
 * @property {string} threadId '' until a thread is opened or started.
 * @property {string} threadQuery The thread browser's search text.
 * @property {ThreadState | null} threadState
 * @property {ThreadState[]} history The open thread's checkpoints, newest first.
 * @property {Run[]} runs The open thread's runs, newest first.
 * @property {Message[]} stateMessages
 * @property {StreamedMessage[]} streamed
 * @property {NodeUpdate[]} updates
 * @property {OtherEvent[]} otherEvents
 * @property {RunView | null} run
 * @property {boolean} streaming
 * @property {string} draft
 * @property {string} extraInput
 * @property {string} extraError
 * @property {string} error
 * @property {JsonObject} context The run context the configuration form holds.
 * @property {DebugSettings} debug
 * @property {ForkPoint | null} fork
 * @property {import('./studio-state-editor.js').StateEdit | null} stateEdit An earlier
 *   checkpoint whose state is being edited.
 * @property {string | null} traceExplorerUrl
 */

/**
 * @typedef {{ type: 'assistantsLoaded', assistants: Assistant[] }
 *   | { type: 'assistantChosen', assistantId: string }
 *   | { type: 'assistantFound', assistant: Assistant }
 *   | { type: 'graphLoaded', graph: GraphDrawing | null }
 *   | { type: 'contextChanged', context: JsonObject }
 *   | { type: 'threadsLoaded', threads: Thread[] }
 *   | { type: 'threadQueryChanged', query: string }
 *   | { type: 'threadOpened', threadId: string }
 *   | { type: 'threadStateLoaded', state: ThreadState | null, history: ThreadState[], runs: Run[] }
 *   | { type: 'draftChanged', draft: string }
 *   | { type: 'extraInputChanged', text: string, error: string }
 *   | { type: 'extraInputRefused', error: string }
 *   | { type: 'errorShown', error: string }
 *   | { type: 'runStarted', input: string, userMessage?: Message }
 *   | { type: 'runIdentified', runId: string }
 *   | { type: 'chunkReceived', chunk: Message }
 *   | { type: 'valuesReceived', messages: Message[] }
 *   | { type: 'updatesReceived', updates: NodeUpdate[] }
 *   | { type: 'otherEventReceived', event: OtherEvent }
 *   | { type: 'runFailed', error: string }
 *   | { type: 'runFinished', status: string }
 *   | { type: 'streamEnded' }
 *   | { type: 'debugChanged', debug: DebugSettings }
 *   | { type: 'forkChosen', fork: ForkPoint | null }
 *   | { type: 'stateEditChosen', edit: import('./studio-state-editor.js').StateEdit | null }
 *   | { type: 'pageConfigLoaded', traceExplorerUrl: string | null }
 * } StudioAction
 */

/**
 * @param {string} assistantId
 * @returns {StudioState}
 */
export function initialState(assistantId) {
  return {
    assistants: [],
    assistantId,
    graph: null,
    threads: [],
    threadId: '',
    threadQuery: '',
    threadState: null,
    history: [],
    runs: [],
    stateMessages: [],
    streamed: [],
    updates: [],
    otherEvents: [],
    run: null,
    streaming: false,
    draft: '',
    extraInput: '',
    extraError: '',
    error: '',
    context: {},
    debug: { streamModes: DEFAULT_STREAM_MODES, interruptBefore: [], interruptAfter: [] },
    fork: null,
    stateEdit: null,
    traceExplorerUrl: null,
  };
}

/** What opening another thread (or none) clears. */
const CLEARED_THREAD = {
  threadState: null,
  history: [],
  runs: [],
  stateMessages: [],
  streamed: [],
  updates: [],
  otherEvents: [],
  run: null,
  fork: null,
  stateEdit: null,
  error: '',
};

/**
 * @param {StudioState} state
 * @param {StudioAction} action
 * @returns {StudioState}
 */
export function studioReducer(state, action) {
  switch (action.type) {
    case 'assistantsLoaded':
      return { ...state, assistants: action.assistants };
    case 'assistantChosen': {
      if (action.assistantId === state.assistantId) return state;
      return {
        ...state,
        assistantId: action.assistantId,
        graph: null,
        debug: { ...state.debug, interruptBefore: [], interruptAfter: [] },
      };
    }
    case 'assistantFound': {
      const known = state.assistants.some((a) => a.assistant_id === action.assistant.assistant_id);
      return {
        ...state,
        assistants: known ? state.assistants : [...state.assistants, action.assistant],
        assistantId: action.assistant.assistant_id,
      };
    }
    case 'graphLoaded':
      return { ...state, graph: action.graph };
    case 'contextChanged':
      return { ...state, context: action.context };
    case 'threadsLoaded':
      return { ...state, threads: action.threads };
    case 'threadQueryChanged':
      return { ...state, threadQuery: action.query };
    case 'threadOpened':
      return { ...state, ...CLEARED_THREAD, threadId: action.threadId };
    case 'threadStateLoaded':
      return {
        ...state,
        threadState: action.state,
        history: action.history,
        runs: action.runs,
        stateMessages: Array.isArray(action.state?.values?.messages) ? action.state.values.messages : [],
      };
    case 'draftChanged':
      return { ...state, draft: action.draft };
    case 'extraInputChanged':
      return { ...state, extraInput: action.text, extraError: action.error };
    case 'extraInputRefused':
      return { ...state, extraError: action.error };
    case 'errorShown':
      return { ...state, error: action.error };
    case 'runStarted':
      return {
        ...state,
        error: '',
        draft: action.userMessage ? '' : state.draft,
        stateMessages: action.userMessage ? [...state.stateMessages, action.userMessage] : state.stateMessages,
        streamed: [],
        updates: [],
        otherEvents: [],
        run: { status: 'pending', input: action.input },
        streaming: true,
      };
    case 'runIdentified':
      return { ...state, run: { ...state.run, id: action.runId, status: 'running' } };
    case 'chunkReceived':
      return {
        ...state,
        streamed: addChunk(state.streamed, action.chunk),
        run: { ...state.run, chunks: (state.run?.chunks ?? 0) + 1 },
      };
    case 'valuesReceived':
      return { ...state, stateMessages: action.messages };
    case 'updatesReceived':
      return {
        ...state,
        updates: [...state.updates, ...action.updates],
        run: { ...state.run, node: action.updates.at(-1)?.node ?? state.run?.node },
      };
    case 'otherEventReceived':
      // Bounded: a debug stream can be long.
      return { ...state, otherEvents: [...state.otherEvents.slice(-199), action.event] };
    case 'runFailed':
      return { ...state, run: { ...state.run, status: state.run?.id ? 'error' : 'not started', error: action.error } };
    case 'runFinished':
      return { ...state, run: { ...state.run, status: action.status } };
    case 'streamEnded':
      return {
        ...state,
        streaming: false,
        streamed: [],
        fork: null,
        run: state.run && { ...state.run, node: undefined },
      };
    case 'debugChanged':
      return { ...state, debug: action.debug };
    case 'forkChosen':
      return { ...state, fork: action.fork };
    case 'stateEditChosen':
      return { ...state, stateEdit: action.edit };
    case 'pageConfigLoaded':
      return { ...state, traceExplorerUrl: action.traceExplorerUrl };
    default:
      return state;
  }
}

/**
 * The interrupts a thread state waits on (its tasks'), oldest first.
 * @param {ThreadState | null | undefined} state
 * @returns {import('./types.js').Interrupt[]}
 */
export function pendingInterrupts(state) {
  return (state?.tasks ?? []).flatMap((task) => task.interrupts ?? []);
}

/**
 * The nodes a thread is paused before at a breakpoint: its next nodes, unless one of them failed
 * (a failed node stays next, and the run ended in an error, not at a breakpoint) or an interrupt
 * waits for an answer.
 * @param {ThreadState | null | undefined} state
 * @returns {string[]}
 */
export function pausedBefore(state) {
  const tasks = state?.tasks ?? [];
  if (tasks.some((task) => task.error || (task.interrupts ?? []).length > 0)) return [];
  return state?.next ?? [];
}

const LAST_ASSISTANT = 'tracepipe.studio.assistant';

/** The assistant the studio showed last in this browser, if any. */
export function lastAssistant() {
  try {
    return localStorage.getItem(LAST_ASSISTANT) ?? '';
  } catch {
    return '';
  }
}

/** @param {string} assistantId Remembered for the next visit. */
export function rememberAssistant(assistantId) {
  try {
    localStorage.setItem(LAST_ASSISTANT, assistantId);
  } catch {
    // Storage may be off (private windows); the studio then opens on the default.
  }
}

/**
 * The assistant the studio opens on when the link names none: the last one used here, else the
 * most recently updated assistant someone created, else the system assistant of the first graph
 * the deployment lists (its `langgraph.json` order), never an arbitrary one.
 * @param {Assistant[]} assistants
 * @param {string[]} graphs The deployment's graphs, in its own order.
 * @param {string} remembered
 * @returns {string}
 */
export function startingAssistant(assistants, graphs, remembered) {
  if (remembered && assistants.some((a) => a.assistant_id === remembered)) return remembered;
  const created = assistants
    .filter((a) => a.metadata?.created_by !== 'system')
    .sort((a, b) => String(b.updated_at ?? '').localeCompare(String(a.updated_at ?? '')));
  if (created[0]) return created[0].assistant_id;
  for (const graph of graphs) {
    const system = assistants.find((a) => a.graph_id === graph);
    if (system) return system.assistant_id;
  }
  return assistants[0]?.assistant_id ?? '';
}

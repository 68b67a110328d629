// @ts-check
// The open thread's past: its runs (status, what started each, when, a link to its trace in the
// trace explorer when one is configured), and its checkpoints, newest first, each of which can be
// forked (the next message starts a new branch from it) or have its state edited (time travel).

import { html } from '@tracepipe/webui/html.js';
import { messageText } from '@tracepipe/webui/messages.js';
import { formatShortTime, shortId } from './format.js';
import { formatJson } from './json-object.js';
import { traceUrl } from './studio-run.js';

/** @typedef {import('./types.js').Run} Run */
/** @typedef {import('./types.js').ThreadState} ThreadState */

/**
 * A few words on what started a run: its message, its resume value, or "continue".
 * @param {Run} run
 * @returns {string}
 */
export function runSummary(run) {
  const kwargs = run.kwargs;
  if (kwargs?.command && kwargs.command.resume !== undefined) {
    const resume = kwargs.command.resume;
    return `resume ${typeof resume === 'string' ? resume : JSON.stringify(resume)}`;
  }
  const input = /** @type {{ messages?: { content?: unknown }[] } | null | undefined} */ (kwargs?.input);
  const last = Array.isArray(input?.messages) ? input.messages.at(-1) : undefined;
  if (last) return messageText(last.content);
  return input ? JSON.stringify(input) : 'continue';
}

/**
 * @param {{ runs: Run[], traceExplorerUrl: string | null }} props
 */
export function RunHistory({ runs, traceExplorerUrl }) {
  return html`
    <section class="panel" aria-labelledby="runs-title">
      <h3 id="runs-title">Runs of this thread</h3>
      ${
        runs.length === 0
          ? html`<p class="muted">No runs yet.</p>`
          : html`<ol class="run-list">
              ${runs.map((run) => {
                const link = traceUrl(traceExplorerUrl, run.run_id);
                return html`<li key=${run.run_id} data-run-id=${run.run_id}>
                  <div class="run-line">
                    <span class=${`status status-${run.status}`}>${run.status}</span>
                    <time datetime=${run.created_at}>${formatShortTime(run.created_at)}</time>
                    <code title=${run.run_id}>${shortId(run.run_id)}</code>
                    ${forkedFrom(run) ? html`<span class="badge">fork</span>` : ''}
                  </div>
                  <div class="run-summary">${runSummary(run)}</div>
                  ${link && html`<a class="trace-link" href=${link} target="_blank" rel="noopener noreferrer">View trace<span class="visually-hidden"> of run ${shortId(run.run_id)}</span></a>`}
                </li>`;
              })}
            </ol>`
      }
    </section>`;
}

/**
 * The checkpoint a run was started from, when it was asked to (a fork): the server keeps it in the
 * run's `config.configurable.checkpoint_id` (null for a run from the thread's latest state).
 * @param {Run} run
 * @returns {string | undefined}
 */
function forkedFrom(run) {
  const configurable = /** @type {Record<string, unknown> | null | undefined} */ (run.kwargs?.config?.configurable);
  const id = configurable?.checkpoint_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * The node(s) that wrote a checkpoint, or its source (`input`, `update`, `fork`).
 * @param {ThreadState} checkpoint
 * @returns {string}
 */
function writer(checkpoint) {
  const writes = checkpoint.metadata?.writes;
  const nodes = writes && typeof writes === 'object' ? Object.keys(writes) : [];
  return nodes.length > 0 ? nodes.join(', ') : (checkpoint.metadata?.source ?? '');
}

/**
 * @param {{
 *   history: ThreadState[],
 *   forkFrom: string | undefined,
 *   busy: boolean,
 *   onFork: (checkpoint: ThreadState) => void,
 *   onEdit: (checkpoint: ThreadState) => void,
 * }} props
 */
export function CheckpointHistory({ history, forkFrom, busy, onFork, onEdit }) {
  return html`
    <section class="panel" aria-labelledby="checkpoints-title">
      <h3 id="checkpoints-title">Checkpoints (time travel)</h3>
      ${
        history.length === 0
          ? html`<p class="muted">No checkpoints yet.</p>`
          : html`<ol class="checkpoints">
              ${history.map((checkpoint, index) => {
                const id = checkpoint.checkpoint?.checkpoint_id ?? checkpoint.checkpoint_id ?? '';
                const step = checkpoint.metadata?.step;
                return html`<li key=${id} data-checkpoint-id=${id} data-step=${step} class=${forkFrom === id ? 'chosen' : ''}>
                  <div class="run-line">
                    <strong>Step ${step ?? '?'}</strong>
                    <span>${writer(checkpoint)}</span>
                    ${index === 0 && html`<span class="badge">current</span>`}
                  </div>
                  <div class="muted small">
                    ${checkpoint.values?.messages?.length ?? 0} messages${checkpoint.next?.length ? ` · next: ${checkpoint.next.join(', ')}` : ''}
                  </div>
                  <details>
                    <summary>Values</summary>
                    <pre class="code">${formatJson(checkpoint.values)}</pre>
                  </details>
                  <div class="actions">
                    <button type="button" class="secondary small" disabled=${busy} onClick=${() => onFork(checkpoint)}>
                      Fork from here<span class="visually-hidden"> (step ${step})</span>
                    </button>
                    <button type="button" class="secondary small" disabled=${busy} onClick=${() => onEdit(checkpoint)}>
                      Edit state<span class="visually-hidden"> at step ${step}</span>
                    </button>
                  </div>
                </li>`;
              })}
            </ol>`
      }
    </section>`;
}

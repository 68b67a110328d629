// @ts-check
// The thread state: what runs next, the step, and the values, which can be edited and saved as an
// update from a node (`POST /threads/{id}/state` with `as_node`), at the current checkpoint or at
// an earlier one (which forks the thread there).

import { useEffect, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { formatJson, parseJsonObject } from './json-object.js';

/** @typedef {import('./types.js').ThreadState} ThreadState */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * @typedef {object} StateEdit
 * @property {string} [checkpointId] An earlier checkpoint to edit; none: the current state.
 * @property {number} [step]
 * @property {unknown} values
 */

/**
 * @param {{
 *   state: ThreadState | null,
 *   edit: StateEdit | null,
 *   nodes: string[],
 *   busy: boolean,
 *   onRefresh: (() => void) | null,
 *   onSave: (update: { values: import('./types.js').JsonObject, asNode: string, checkpointId?: string }) => Promise<void>,
 *   onCancelEdit: () => void,
 * }} props
 */
export function StatePanel({ state, edit, nodes, busy, onRefresh, onSave, onCancelEdit }) {
  const shown = edit ? edit.values : state?.values;
  const [text, setText] = useState(formatJson(shown));
  const [asNode, setAsNode] = useState('');
  const [error, setError] = useState('');
  const [editing, setEditing] = useState(false);
  // A new state (another run, another thread, a checkpoint chosen) replaces the text.
  useEffect(() => {
    setText(formatJson(shown));
    setError('');
    setEditing(Boolean(edit));
  }, [shown, edit]);

  /** @param {Event} event */
  const save = async (event) => {
    event.preventDefault();
    const parsed = parseJsonObject(text);
    if (parsed.error !== undefined) {
      setError(parsed.error);
      document.getElementById('state-values')?.focus();
      return;
    }
    setError('');
    await onSave({ values: parsed.value, asNode, checkpointId: edit?.checkpointId });
    setEditing(false);
  };

  return html`
    <section class="panel" aria-labelledby="state-title">
      <div class="panel-head">
        <h3 id="state-title">Thread state</h3>
        <button type="button" class="secondary small" onClick=${onRefresh} disabled=${!onRefresh}>Refresh</button>
      </div>
      ${
        state
          ? html`<dl class="facts">
              <dt>Next</dt><dd>${state.next?.length ? state.next.join(', ') : 'nothing pending'}</dd>
              <dt>Step</dt><dd>${state.metadata?.step ?? '—'}</dd>
              <dt>Messages</dt><dd>${state.values?.messages?.length ?? 0}</dd>
            </dl>
            <details>
              <summary>Values (JSON)</summary>
              <pre class="code" data-testid="thread-state">${formatJson(state.values)}</pre>
            </details>
            ${
              editing
                ? html`<form class="state-editor" onSubmit=${save}>
                    <p class="hint">${edit?.checkpointId ? `Editing the state at step ${edit.step ?? '?'}: saving forks the thread there.` : 'Editing the current state.'} The values are applied as an update from the chosen node, through its reducers (messages with the same id replace each other).</p>
                    <div class=${`field${error ? ' invalid' : ''}`}>
                      <label for="state-values">Values (JSON object)</label>
                      <textarea id="state-values" class="code" rows="10" spellcheck="false" value=${text}
                        onInput=${(/** @type {FieldEvent} */ e) => setText(e.currentTarget.value)}
                        aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? 'state-values-error' : undefined}></textarea>
                      ${error && html`<p class="field-error" id="state-values-error">${error}</p>`}
                    </div>
                    <div class="field">
                      <label for="state-as-node">As node</label>
                      <select id="state-as-node" value=${asNode} onChange=${(/** @type {FieldEvent} */ e) => setAsNode(e.currentTarget.value)}>
                        <option value="">The last node that ran</option>
                        ${nodes.map((node) => html`<option value=${node}>${node}</option>`)}
                      </select>
                    </div>
                    <div class="actions">
                      <button type="button" class="secondary" onClick=${() => {
                        setEditing(false);
                        onCancelEdit();
                      }}>Cancel</button>
                      <button type="submit" disabled=${busy}>Save state</button>
                    </div>
                  </form>`
                : html`<div class="actions"><button type="button" class="secondary small" disabled=${busy} onClick=${() => setEditing(true)}>Edit state</button></div>`
            }`
          : html`<p class="muted">Choose or start a thread.</p>`
      }
    </section>`;
}

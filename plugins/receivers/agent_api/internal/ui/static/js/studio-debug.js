// @ts-check
// Debug settings of the studio's runs: which stream modes to ask for (events of the modes the
// conversation does not use are listed as they arrive), and breakpoints: nodes to pause before
// (`interrupt_before`) or after (`interrupt_after`).

import { html } from '@tracepipe/webui/html.js';
import { formatJson } from './json-object.js';
import { STREAM_MODES } from './studio-state.js';

/** @typedef {import('./studio-state.js').DebugSettings} DebugSettings */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * `list` with `item` added or removed.
 * @param {string[]} list
 * @param {string} item
 * @param {boolean} on
 */
const toggled = (list, item, on) => (on ? [...new Set([...list, item])] : list.filter((x) => x !== item));

/**
 * @param {{ debug: DebugSettings, nodes: string[], onChange: (debug: DebugSettings) => void }} props
 */
export function DebugSettingsForm({ debug, nodes, onChange }) {
  /** @param {FieldEvent} e */
  const checked = (e) => /** @type {HTMLInputElement} */ (e.currentTarget).checked;
  return html`
    <div class="debug-settings">
      <fieldset>
        <legend>Stream modes</legend>
        ${STREAM_MODES.map(
          (
            mode,
          ) => html`<label class="checkbox" key=${mode}><input type="checkbox" checked=${debug.streamModes.includes(mode)}
            onChange=${(/** @type {FieldEvent} */ e) => onChange({ ...debug, streamModes: toggled(debug.streamModes, mode, checked(e)) })} /> ${mode}</label>`,
        )}
      </fieldset>
      ${
        nodes.length > 0 &&
        html`<fieldset>
          <legend>Breakpoints</legend>
          <table class="breakpoints">
            <thead><tr><th scope="col">Node</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
            <tbody>
              ${nodes.map(
                (node) => html`<tr key=${node}>
                  <th scope="row">${node}</th>
                  <td><input type="checkbox" aria-label=${`Pause before ${node}`} checked=${debug.interruptBefore.includes(node)}
                    onChange=${(/** @type {FieldEvent} */ e) => onChange({ ...debug, interruptBefore: toggled(debug.interruptBefore, node, checked(e)) })} /></td>
                  <td><input type="checkbox" aria-label=${`Pause after ${node}`} checked=${debug.interruptAfter.includes(node)}
                    onChange=${(/** @type {FieldEvent} */ e) => onChange({ ...debug, interruptAfter: toggled(debug.interruptAfter, node, checked(e)) })} /></td>
                </tr>`,
              )}
            </tbody>
          </table>
        </fieldset>`
      }
    </div>`;
}

/** @param {{ events: import('./types.js').OtherEvent[] }} props */
export function OtherEventsPanel({ events }) {
  if (events.length === 0) return null;
  return html`
    <section class="panel" aria-labelledby="other-events-title">
      <h3 id="other-events-title">Other stream events</h3>
      <ol class="updates">
        ${events.map(
          (event, index) => html`<li key=${index}><details>
            <summary><strong>${event.event}</strong></summary>
            <pre class="code">${formatJson(event.data)}</pre>
          </details></li>`,
        )}
      </ol>
    </section>`;
}

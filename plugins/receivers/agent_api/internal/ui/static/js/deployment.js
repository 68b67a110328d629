// @ts-check
// The Deployment screen: what this server is (versions, graphs) and the addresses other agents and
// tools use to reach its assistants — the MCP endpoint (every assistant as a tool) and each
// assistant's A2A endpoint and agent card — each with a Copy button. Addresses are absolute, built
// from the page's own origin, which is the API's.

import { useEffect, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { api } from './api.js';

/** @typedef {import('./types.js').Announce} Announce */
/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./types.js').ServerInfo} ServerInfo */

/**
 * @param {{ id: string, label: string, value: string, announce: Announce }} props
 */
function CopyField({ id, label, value, announce }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      announce(`Copied ${label}.`);
    } catch {
      /** @type {HTMLInputElement | null} */ (document.getElementById(id))?.select();
      announce(`Select and copy ${label} by hand: the browser refused the clipboard.`);
    }
  };
  return html`
    <div class="field copy-field">
      <label for=${id}>${label}</label>
      <div class="copy-row">
        <input id=${id} class="code" readonly value=${value} onFocus=${(/** @type {FocusEvent & { currentTarget: HTMLInputElement }} */ e) => e.currentTarget.select()} />
        <button type="button" class="secondary small" onClick=${copy} aria-label=${`Copy ${label}`}>Copy</button>
      </div>
    </div>`;
}

/**
 * @param {{ announce: Announce }} props
 */
export function DeploymentPage({ announce }) {
  const [info, setInfo] = useState(/** @type {ServerInfo | null} */ (null));
  const [assistants, setAssistants] = useState(/** @type {Assistant[]} */ ([]));
  const [error, setError] = useState('');
  useEffect(() => {
    Promise.all([api.info(), api.searchAssistants({ limit: 1000, sort_by: 'name', sort_order: 'asc' })]).then(
      ([found, list]) => {
        setInfo(found);
        setAssistants(list);
      },
      (failure) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  }, []);
  const origin = window.location.origin;
  const flags = info?.flags ?? {};
  return html`
    <section class="deployment" aria-labelledby="deployment-title">
      <h1 id="deployment-title">Deployment</h1>
      ${error && html`<div class="error-banner" role="alert">${error}</div>`}
      ${
        info &&
        html`
        <p class="muted">Agent server ${info.version}, LangGraph.js ${info.langgraph_js_version}; graphs: ${(info.graphs ?? []).join(', ')}.
          Crons are ${flags.crons ? 'on' : 'off'}.</p>
        <section class="panel" aria-labelledby="mcp-title">
          <h2 id="mcp-title">MCP</h2>
          ${
            flags.mcp === false
              ? html`<p class="muted">MCP is turned off (<code>mcp.enabled: false</code>).</p>`
              : html`
            <p class="hint">Streamable HTTP, without sessions: every assistant you can see is one tool. Send the same credentials as to the API.</p>
            <${CopyField} id="mcp-url" label="MCP address" value=${`${origin}/mcp`} announce=${announce} />`
          }
        </section>
        <section class="panel" aria-labelledby="a2a-title">
          <h2 id="a2a-title">A2A</h2>
          ${
            flags.a2a === false
              ? html`<p class="muted">A2A is turned off (<code>a2a.enabled: false</code>).</p>`
              : html`
            <p class="hint">JSON-RPC (<code>message/send</code>, <code>message/stream</code>, <code>tasks/get</code>, <code>tasks/cancel</code>) for assistants whose graph takes <code>messages</code>.</p>
            <ul class="a2a-list">
              ${assistants.map(
                (assistant) => html`
                <li key=${assistant.assistant_id}>
                  <h3>${assistant.name} <span class="muted small">(${assistant.graph_id})</span></h3>
                  <${CopyField} id=${`a2a-${assistant.assistant_id}`} label=${`A2A address of ${assistant.name}`}
                    value=${`${origin}/a2a/${assistant.assistant_id}`} announce=${announce} />
                  <${CopyField} id=${`card-${assistant.assistant_id}`} label=${`Agent card of ${assistant.name}`}
                    value=${`${origin}/.well-known/agent-card.json?assistant_id=${assistant.assistant_id}`} announce=${announce} />
                </li>`,
              )}
            </ul>`
          }
        </section>`
      }
    </section>`;
}

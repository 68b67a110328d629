// @ts-check
// The versions of one assistant, newest first, with "Make active" on every inactive one
// (`POST /assistants/{id}/latest`). Runs use the active version.

import { useState } from 'preact/hooks';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { api } from './api.js';

/**
 * @param {{
 *   assistant: import('./types.js').Assistant,
 *   versions: import('./types.js').AssistantVersion[],
 *   onActivated: (updated: import('./types.js').Assistant, version: number) => Promise<void>,
 * }} props
 */
export function VersionList({ assistant, versions, onActivated }) {
  const [busyVersion, setBusyVersion] = useState(/** @type {number | null} */ (null));
  const [error, setError] = useState('');

  /** @param {number} version */
  const activate = async (version) => {
    setBusyVersion(version);
    setError('');
    try {
      const updated = await api.setLatestVersion(assistant.assistant_id, version);
      await onActivated(updated ?? { ...assistant, version }, version);
    } catch (failure) {
      setError(/** @type {Error} */ (failure).message);
    } finally {
      setBusyVersion(null);
    }
  };

  return html`
    <section class="panel" aria-labelledby="versions-title">
      <h3 id="versions-title">Versions</h3>
      ${error && html`<div class="error-banner" role="alert">${error}</div>`}
      <ol class="versions">
        ${versions.map((version) => {
          const active = version.version === assistant.version;
          return html`
            <li key=${version.version} class=${active ? 'active' : ''} data-version=${version.version}>
              <div class="version-head">
                <strong>Version ${version.version}</strong>
                ${active && html`<span class="badge accent">Active</span>`}
                <span class="muted">${formatTime(version.created_at)}</span>
              </div>
              <div class="version-body">
                <span>${version.name}</span>
                <code class="inline-json">${JSON.stringify(version.context ?? {})}</code>
              </div>
              ${
                !active &&
                html`<button type="button" class="secondary small" disabled=${busyVersion !== null}
                  aria-label=${`Make version ${version.version} active`} onClick=${() => activate(version.version)}>
                  ${busyVersion === version.version ? 'Activating…' : 'Make active'}
                </button>`
              }
            </li>`;
        })}
      </ol>
    </section>`;
}

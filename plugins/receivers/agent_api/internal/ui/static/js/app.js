// @ts-check
// The application shell: header with the screens (Assistants, Studio, Crons, Deployment), the
// API-key setting, a polite live region for confirmations, and the routed page. When the server answers 401, the
// shell asks for the key by opening the API-key dialog itself — once: dismissing the dialog stops
// the asking for this page, and the API key button still opens it.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { api, getApiKey, onUnauthorized, setApiKey } from './api.js';
import { AssistantsPage } from './assistants.js';
import { CronsPage } from './crons.js';
import { DeploymentPage } from './deployment.js';
import { href, useRoute } from './route.js';
import { StudioPage } from './studio.js';

/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * @param {{ reason: string, onClose: () => void, onSaved: () => void, onDismissed: () => void }} props
 */
function ApiKeyDialog({ reason, onClose, onSaved, onDismissed }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const [value, setValue] = useState(getApiKey());
  useEffect(() => {
    /** @type {HTMLDialogElement} */ (dialog.current).showModal();
  }, []);
  /** @param {SubmitEvent} event */
  const save = (event) => {
    event.preventDefault();
    setApiKey(value.trim());
    onSaved();
    /** @type {HTMLDialogElement} */ (dialog.current).close();
  };
  const cancel = () => {
    onDismissed();
    /** @type {HTMLDialogElement} */ (dialog.current).close();
  };
  return html`
    <dialog ref=${dialog} class="dialog" aria-labelledby="api-key-title" aria-describedby=${reason ? 'api-key-reason' : undefined} onClose=${onClose} onCancel=${onDismissed}>
      <form onSubmit=${save}>
        <h2 id="api-key-title">API key</h2>
        ${reason && html`<p id="api-key-reason" class="field-error" role="alert">${reason}</p>`}
        <p class="hint">Sent as <code>X-Api-Key</code> with every request when the server requires one; a value starting with <code>Bearer </code> is sent as the <code>Authorization</code> header instead. Kept for this tab only.</p>
        <label for="api-key-input">Key</label>
        <input id="api-key-input" type="password" autocomplete="off" value=${value} onInput=${(/** @type {FieldEvent} */ e) => setValue(e.currentTarget.value)} />
        <div class="actions">
          <button type="button" class="secondary" onClick=${cancel}>Cancel</button>
          <button type="submit">Save</button>
        </div>
      </form>
    </dialog>`;
}

export function App() {
  const route = useRoute();
  const [notice, setNotice] = useState('');
  // false, or the dialog's reason line ('' when opened from the button).
  const [keyDialog, setKeyDialog] = useState(/** @type {false | string} */ (false));
  // Set once the user dismisses a dialog the server's 401 opened: then the page stops asking.
  const dismissed = useRef(false);
  useEffect(
    () =>
      onUnauthorized(() => {
        if (dismissed.current) return;
        setKeyDialog((open) =>
          open === false
            ? getApiKey()
              ? 'The server refused this key. Enter another one.'
              : 'The server needs an API key.'
            : open,
        );
      }),
    [],
  );
  // Bumped when the API key changes, so the screen remounts and reloads with the new key.
  const [keyVersion, setKeyVersion] = useState(0);
  // The trace explorer's trace list, when the deployment has one: a "Traces" link in the header.
  const [tracesUrl, setTracesUrl] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    api.pageConfig().then((config) => setTracesUrl(config.trace_explorer_url));
  }, []);
  // A notice goes away on the next navigation, unless it announces that navigation (`carry`:
  // "Deleted …" is shown on the list the page moves to).
  const keepNotice = useRef(false);
  const announce = useCallback(
    /** @type {import('./types.js').Announce} */
    (message, { carry = false } = {}) => {
      keepNotice.current = carry;
      setNotice(message);
    },
    [],
  );
  const routeKey = `${route.page}/${route.assistantId ?? ''}/${route.create ? 'new' : ''}`;
  useEffect(() => {
    if (keepNotice.current) keepNotice.current = false;
    else setNotice('');
  }, [routeKey]);

  useEffect(() => {
    /** @type {Partial<Record<import('./route.js').Route['page'], string>>} */
    const titles = { studio: 'Studio', crons: 'Crons', deployment: 'Deployment' };
    document.title = `${titles[route.page] ?? 'Assistants'} · tracepipe agent server`;
  }, [route.page]);

  return html`
    <a class="skip-link" href="#main">Skip to content</a>
    <header class="topbar">
      <span class="brand">tracepipe <span class="brand-sub">agent server</span></span>
      <nav aria-label="Main">
        <a href=${href.assistants()} aria-current=${route.page === 'assistants' ? 'page' : undefined}>Assistants</a>
        <a href=${href.studio(route.page === 'assistants' ? route.assistantId : undefined)} aria-current=${route.page === 'studio' ? 'page' : undefined}>Studio</a>
        <a href=${href.crons()} aria-current=${route.page === 'crons' ? 'page' : undefined}>Crons</a>
        <a href=${href.deployment()} aria-current=${route.page === 'deployment' ? 'page' : undefined}>Deployment</a>
        ${tracesUrl && html`<a href=${tracesUrl} data-testid="traces-link">Traces</a>`}
      </nav>
      <button type="button" class="secondary small" onClick=${() => setKeyDialog('')}>API key</button>
    </header>
    <div class="notice" role="status" aria-live="polite">${notice}</div>
    <main id="main" tabindex="-1" key=${keyVersion}>
      ${
        route.page === 'studio'
          ? html`<${StudioPage} initialAssistantId=${route.assistantId} initialThreadId=${route.threadId} announce=${announce} />`
          : route.page === 'crons'
            ? html`<${CronsPage} announce=${announce} />`
            : route.page === 'deployment'
              ? html`<${DeploymentPage} announce=${announce} />`
              : html`<${AssistantsPage} route=${route} announce=${announce} />`
      }
    </main>
    ${
      keyDialog !== false &&
      html`<${ApiKeyDialog}
      reason=${keyDialog}
      onClose=${() => setKeyDialog(false)}
      onDismissed=${() => (dismissed.current = true)}
      onSaved=${() => {
        dismissed.current = false;
        setKeyVersion((n) => n + 1);
      }}
    />`
    }`;
}

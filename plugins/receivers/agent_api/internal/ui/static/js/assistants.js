// @ts-check
// The Assistants screen: search (graph filter, name), the list, and beside it either the
// creation form or the selected assistant — edit (a new active version), versions with
// "Make active", delete after confirmation, and a link to try it in the studio.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { api, listGraphs } from './api.js';
import { AssistantForm } from './assistant-form.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { isSystemAssistant } from './format.js';
import { href, navigate } from './route.js';
import { VersionList } from './versions.js';

/** @typedef {import('./types.js').Announce} Announce */
/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./types.js').AssistantBody} AssistantBody */
/** @typedef {import('./types.js').AssistantQuery} AssistantQuery */
/** @typedef {import('./types.js').AssistantVersion} AssistantVersion */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */
/** @typedef {{ name: string, graph: string }} AssistantFilter */

/** @returns {string[]} the deployment's graph ids, once known. */
function useGraphs() {
  const [graphs, setGraphs] = useState(/** @type {string[]} */ ([]));
  useEffect(() => {
    listGraphs().then(setGraphs, () => setGraphs([]));
  }, []);
  return graphs;
}

/**
 * @param {{ graphs: string[], filter: AssistantFilter, onChange: (filter: AssistantFilter) => void }} props
 */
function AssistantSearch({ graphs, filter, onChange }) {
  return html`
    <form role="search" class="search" aria-label="Search assistants" onSubmit=${(/** @type {SubmitEvent} */ e) => e.preventDefault()}>
      <div class="field">
        <label for="search-name">Name</label>
        <input id="search-name" type="search" placeholder="Any name" value=${filter.name}
          onInput=${(/** @type {FieldEvent} */ e) => onChange({ ...filter, name: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="search-graph">Graph</label>
        <select id="search-graph" value=${filter.graph} onChange=${(/** @type {FieldEvent} */ e) => onChange({ ...filter, graph: e.currentTarget.value })}>
          <option value="">All graphs</option>
          ${graphs.map((graph) => html`<option value=${graph}>${graph}</option>`)}
        </select>
      </div>
    </form>`;
}

/**
 * @param {{ assistants: Assistant[], selectedId: string | undefined, loading: boolean, error: string }} props
 */
function AssistantTable({ assistants, selectedId, loading, error }) {
  if (error) return html`<div class="error-banner" role="alert">${error}</div>`;
  if (!loading && assistants.length === 0) return html`<p class="empty">No assistants match.</p>`;
  return html`
    <table class="assistants" aria-busy=${loading ? 'true' : 'false'}>
      <caption class="visually-hidden">Assistants</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Graph</th><th scope="col">Version</th><th scope="col">Updated</th></tr></thead>
      <tbody>
        ${assistants.map(
          (assistant) => html`
            <tr key=${assistant.assistant_id} class=${assistant.assistant_id === selectedId ? 'selected' : ''}>
              <th scope="row">
                <a href=${href.assistant(assistant.assistant_id)} aria-current=${assistant.assistant_id === selectedId ? 'true' : undefined}>${assistant.name}</a>
                ${isSystemAssistant(assistant) && html` <span class="badge">system</span>`}
                ${assistant.description && html`<div class="muted small">${assistant.description}</div>`}
              </th>
              <td>${assistant.graph_id}</td>
              <td>${assistant.version}</td>
              <td class="muted">${formatTime(assistant.updated_at)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

/**
 * @param {{ assistantId: string, graphs: string[], announce: Announce, onChanged: () => void }} props
 */
function AssistantDetail({ assistantId, graphs, announce, onChanged }) {
  const [assistant, setAssistant] = useState(/** @type {Assistant | null} */ (null));
  const [versions, setVersions] = useState(/** @type {AssistantVersion[]} */ ([]));
  const [error, setError] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [deleteError, setDeleteError] = useState('');
  const [formKey, setFormKey] = useState(0);
  const heading = useRef(/** @type {HTMLHeadingElement | null} */ (null));

  const load = useCallback(async () => {
    setError('');
    try {
      const [current, history] = await Promise.all([
        api.getAssistant(assistantId),
        api.assistantVersions(assistantId).catch(() => []),
      ]);
      setAssistant(current);
      setVersions(history);
      // The form restarts from the active version whenever it changes.
      setFormKey((key) => key + 1);
    } catch (failure) {
      setAssistant(null);
      setError(/** @type {Error} */ (failure).message);
    }
  }, [assistantId]);

  useEffect(() => {
    setAssistant(null);
    load();
  }, [load]);

  // Opening an assistant moves focus to its heading, as a page change would, so keyboard and
  // screen-reader users land on what they opened.
  const loaded = assistant !== null;
  useEffect(() => {
    if (loaded) heading.current?.focus();
  }, [loaded]);

  /** @param {AssistantBody} body */
  const save = async (body) => {
    const updated = await api.updateAssistant(assistantId, body);
    await load();
    // The form is rebuilt from the new version; focus goes to the heading, not to the page body.
    heading.current?.focus();
    onChanged();
    announce(`Saved “${updated.name}” as version ${updated.version}, now active.`);
  };

  /**
   * @param {Assistant} _updated
   * @param {number} version
   */
  const activated = async (_updated, version) => {
    await load();
    heading.current?.focus();
    onChanged();
    announce(`Version ${version} is now active.`);
  };

  const remove = async () => {
    setDeleteError('');
    try {
      await api.deleteAssistant(assistantId);
      setConfirming(false);
      onChanged();
      // Deleting is offered once the assistant is shown.
      announce(`Deleted “${/** @type {Assistant} */ (assistant).name}” and all its versions.`, { carry: true });
      navigate(href.assistants());
    } catch (failure) {
      setConfirming(false);
      setDeleteError(/** @type {Error} */ (failure).message);
    }
  };

  if (error) return html`<section class="detail"><div class="error-banner" role="alert">${error}</div></section>`;
  if (!assistant) return html`<section class="detail"><p class="muted">Loading…</p></section>`;
  return html`
    <section class="detail" aria-labelledby="detail-title">
      <div class="detail-head">
        <div>
          <h2 id="detail-title" ref=${heading} tabindex="-1">${assistant.name}</h2>
          <p class="muted small">
            ${assistant.graph_id} · version ${assistant.version} active · <code>${assistant.assistant_id}</code>
          </p>
        </div>
        <div class="actions">
          <a class="button secondary" href=${href.studio(assistant.assistant_id)}>Open in studio</a>
          <button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete…</button>
        </div>
      </div>
      ${deleteError && html`<div class="error-banner" role="alert">${deleteError}</div>`}
      <section class="panel" aria-labelledby="edit-title">
        <h3 id="edit-title">Edit</h3>
        <p class="hint">Saving writes a new version from exactly what is in this form and makes it active.</p>
        <${AssistantForm} key=${formKey} mode="edit" graphs=${graphs} initial=${assistant} onSubmit=${save} />
      </section>
      <${VersionList} assistant=${assistant} versions=${versions} onActivated=${activated} />
      ${
        confirming &&
        html`<${ConfirmDialog} title="Delete this assistant?" confirmLabel="Delete assistant" onConfirm=${remove} onCancel=${() => setConfirming(false)}>
        <p>“${assistant.name}” and all of its ${versions.length} version${versions.length === 1 ? '' : 's'} will be removed. This cannot be undone.</p>
      <//>`
      }
    </section>`;
}

/** @param {{ graphs: string[], announce: Announce, onChanged: () => void }} props */
function CreatePanel({ graphs, announce, onChanged }) {
  /** @param {AssistantBody} body */
  const create = async (body) => {
    const created = await api.createAssistant(body);
    onChanged();
    announce(`Created “${created.name}” (version ${created.version}).`, { carry: true });
    navigate(href.assistant(created.assistant_id));
  };
  return html`
    <section class="detail" aria-labelledby="create-title">
      <h2 id="create-title">New assistant</h2>
      <${AssistantForm} mode="create" graphs=${graphs} onSubmit=${create} onCancel=${() => navigate(href.assistants())} />
    </section>`;
}

/** @param {{ route: import('./route.js').Route, announce: Announce }} props */
export function AssistantsPage({ route, announce }) {
  const graphs = useGraphs();
  const [filter, setFilter] = useState({ name: '', graph: '' });
  const [assistants, setAssistants] = useState(/** @type {Assistant[]} */ ([]));
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);
  const reload = useCallback(() => setReloads((n) => n + 1), []);
  const searchedName = useRef(filter.name);

  useEffect(() => {
    let live = true;
    // Typing in the name box searches after a short pause, not on every key; anything else
    // (graph filter, a change made on this page) reloads at once.
    const typing = searchedName.current !== filter.name;
    searchedName.current = filter.name;
    const timer = setTimeout(
      async () => {
        setLoading(true);
        try {
          /** @type {AssistantQuery} */
          const query = { limit: 100 };
          if (filter.name.trim()) query.name = filter.name.trim();
          if (filter.graph) query.graph_id = filter.graph;
          const found = await api.searchAssistants(query);
          if (live) {
            setAssistants(found);
            setError('');
          }
        } catch (failure) {
          if (live) setError(/** @type {Error} */ (failure).message);
        } finally {
          if (live) setLoading(false);
        }
      },
      typing ? 200 : 0,
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [filter, reloads]);

  return html`
    <div class="split">
      <section class="list" aria-labelledby="assistants-title">
        <div class="list-head">
          <h1 id="assistants-title">Assistants</h1>
          <a class="button" href=${href.newAssistant()}>New assistant</a>
        </div>
        <${AssistantSearch} graphs=${graphs} filter=${filter} onChange=${setFilter} />
        <${AssistantTable} assistants=${assistants} selectedId=${route.assistantId} loading=${loading} error=${error} />
      </section>
      ${
        route.create
          ? html`<${CreatePanel} graphs=${graphs} announce=${announce} onChanged=${reload} />`
          : route.assistantId
            ? html`<${AssistantDetail} key=${route.assistantId} assistantId=${route.assistantId} graphs=${graphs} announce=${announce} onChanged=${reload} />`
            : html`<section class="detail empty-detail"><p class="muted">Choose an assistant to edit it, see its versions or delete it, or create a new one.</p></section>`
      }
    </div>`;
}

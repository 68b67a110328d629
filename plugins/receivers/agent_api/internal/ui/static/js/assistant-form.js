// @ts-check
// The assistant form, for creating (graph, name, description, configuration) and for editing,
// which writes a new active version: the form always sends the whole context and metadata, since
// an update keeps nothing from the previous version. Fields are checked before sending; a
// problem is shown next to its field and focus moves there.

import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { api } from './api.js';
import { formatJson, parseJsonObject } from './json-object.js';

/** @typedef {import('./types.js').AssistantBody} AssistantBody */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */
/** @typedef {'graph' | 'name' | 'context' | 'metadata'} FieldName */
/** @typedef {Partial<Record<FieldName, string>>} FieldErrors */
/** @typedef {{ key: string, type: string | undefined, description: string | undefined }} ContextKey */

/**
 * @param {{ id: string, label: string, hint?: import('@tracepipe/webui/html.js').Children, error?: string, children: import('@tracepipe/webui/html.js').Children }} props
 */
function Field({ id, label, hint, error, children }) {
  return html`
    <div class=${`field${error ? ' invalid' : ''}`}>
      <label for=${id}>${label}</label>
      ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
      ${children}
      ${error && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
    </div>`;
}

/**
 * @param {string} id
 * @param {boolean} hint Whether the field shows a hint.
 * @param {string | undefined} error
 * @returns {string | undefined}
 */
const describedBy = (id, hint, error) =>
  [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;

/**
 * The keys a graph reads from its context, from its schema; empty when the schema is unknown.
 * @param {string} graphId
 * @returns {ContextKey[]}
 */
function useContextKeys(graphId) {
  const [keys, setKeys] = useState(/** @type {ContextKey[]} */ ([]));
  useEffect(() => {
    setKeys([]);
    if (!graphId) return undefined;
    let live = true;
    api
      .assistantSchemas(graphId)
      .then((schemas) => {
        const properties = (schemas.context_schema ?? schemas.config_schema)?.properties ?? {};
        if (live)
          setKeys(
            Object.entries(properties).map(([key, schema]) => ({
              key,
              type: schema?.type,
              description: schema?.description,
            })),
          );
      })
      .catch(() => live && setKeys([]));
    return () => {
      live = false;
    };
  }, [graphId]);
  return keys;
}

/**
 * @param {{ mode: 'create' | 'edit', graphs: string[], initial?: import('./types.js').Assistant, onSubmit: (body: AssistantBody) => Promise<void>, onCancel?: () => void }} props
 */
export function AssistantForm({ mode, graphs, initial, onSubmit, onCancel }) {
  const prefix = `assistant-${mode}`;
  const [graphId, setGraphId] = useState(initial?.graph_id ?? '');
  const [name, setName] = useState(initial?.name ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [context, setContext] = useState(formatJson(initial?.context));
  const [metadata, setMetadata] = useState(formatJson(initial?.metadata));
  const [errors, setErrors] = useState(/** @type {FieldErrors} */ ({}));
  const [serverError, setServerError] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useRef(/** @type {HTMLFormElement | null} */ (null));
  const contextKeys = useContextKeys(graphId);

  // Once a field shows an error, it is re-checked as the user types, so the message goes away (or
  // changes) without another submit. Checking on blur instead would shift the layout under the
  // pointer between pressing and releasing the submit button, and the click would miss it.
  /**
   * @param {'context' | 'metadata'} field
   * @param {(text: string) => void} setter
   */
  const jsonInput = (field, setter) => (/** @type {FieldEvent} */ event) => {
    const text = event.currentTarget.value;
    setter(text);
    if (errors[field]) setErrors((current) => ({ ...current, [field]: parseJsonObject(text).error }));
  };

  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const parsedContext = parseJsonObject(context);
    const parsedMetadata = parseJsonObject(metadata);
    /** @type {FieldErrors} */
    const found = {
      graph: graphId ? undefined : 'Choose the graph this assistant runs.',
      name: name.trim() ? undefined : 'Give the assistant a name.',
      context: parsedContext.error,
      metadata: parsedMetadata.error,
    };
    setErrors(found);
    setServerError('');
    const firstInvalid = /** @type {FieldName[]} */ (['graph', 'name', 'context', 'metadata']).find(
      (field) => found[field],
    );
    if (firstInvalid) {
      const field = /** @type {HTMLFormElement} */ (form.current).querySelector(`#${prefix}-${firstInvalid}`);
      /** @type {HTMLElement | null} */ (field)?.focus();
      return;
    }
    /** @type {AssistantBody} */
    const body = {
      name: name.trim(),
      description: description.trim() || null,
      context: parsedContext.value,
      metadata: parsedMetadata.value,
    };
    if (mode === 'create') body.graph_id = graphId;
    setBusy(true);
    try {
      await onSubmit(body);
    } catch (error) {
      setServerError(/** @type {Error} */ (error).message);
    } finally {
      setBusy(false);
    }
  };

  /** @param {(value: string) => void} setter */
  const input = (setter) => (/** @type {FieldEvent} */ event) => setter(event.currentTarget.value);

  return html`
    <form ref=${form} class="assistant-form" onSubmit=${submit} noValidate aria-describedby=${serverError ? `${prefix}-server-error` : undefined}>
      ${serverError && html`<div class="error-banner" role="alert" id=${`${prefix}-server-error`}><strong>The server refused this:</strong> ${serverError}</div>`}
      <${Field} id=${`${prefix}-graph`} label="Graph" error=${errors.graph}
        hint=${mode === 'edit' ? 'The graph of an assistant is fixed; create another assistant for another graph.' : undefined}>
        <select id=${`${prefix}-graph`} value=${graphId} disabled=${mode === 'edit'} onChange=${input(setGraphId)}
          aria-invalid=${errors.graph ? 'true' : undefined} aria-describedby=${describedBy(`${prefix}-graph`, mode === 'edit', errors.graph)}>
          ${mode === 'create' && html`<option value="">Choose a graph…</option>`}
          ${graphs.map((graph) => html`<option value=${graph}>${graph}</option>`)}
          ${mode === 'edit' && !graphs.includes(graphId) && html`<option value=${graphId}>${graphId}</option>`}
        </select>
      <//>
      <${Field} id=${`${prefix}-name`} label="Name" error=${errors.name}>
        <input id=${`${prefix}-name`} type="text" value=${name} onInput=${input(setName)} autocomplete="off"
          aria-invalid=${errors.name ? 'true' : undefined} aria-describedby=${describedBy(`${prefix}-name`, false, errors.name)} />
      <//>
      <${Field} id=${`${prefix}-description`} label="Description (optional)">
        <textarea id=${`${prefix}-description`} rows="2" value=${description} onInput=${input(setDescription)}></textarea>
      <//>
      <${Field} id=${`${prefix}-context`} label="Configuration (context, JSON object)" error=${errors.context}
        hint=${
          contextKeys.length > 0
            ? html`This graph reads: ${contextKeys.map((k, i) => html`${i > 0 ? ', ' : ''}<code>${k.key}</code>${k.description ? ` (${k.description.replace(/\.$/, '')})` : ''}`)}.`
            : 'The keys the graph reads from its context, for example {"system_prompt": "…"}.'
        }>
        <textarea id=${`${prefix}-context`} class="code" rows="7" spellcheck="false" value=${context}
          onInput=${jsonInput('context', setContext)}
          aria-invalid=${errors.context ? 'true' : undefined} aria-describedby=${describedBy(`${prefix}-context`, true, errors.context)}></textarea>
      <//>
      <${Field} id=${`${prefix}-metadata`} label="Metadata (JSON object)" error=${errors.metadata}>
        <textarea id=${`${prefix}-metadata`} class="code" rows="3" spellcheck="false" value=${metadata}
          onInput=${jsonInput('metadata', setMetadata)}
          aria-invalid=${errors.metadata ? 'true' : undefined} aria-describedby=${describedBy(`${prefix}-metadata`, false, errors.metadata)}></textarea>
      <//>
      <div class="actions">
        ${onCancel && html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>`}
        <button type="submit" disabled=${busy}>${busy ? 'Saving…' : mode === 'create' ? 'Create assistant' : 'Save as new version'}</button>
      </div>
    </form>`;
}

// @ts-check
// The run's configuration as a form generated from the graph's context schema
// (`GET /assistants/{id}/schemas`: `context_schema`, else `config_schema`): a text field per
// string, a number field per number, a checkbox per boolean, a list per enum, JSON for the rest.
// It starts from the assistant's own context and is sent as each run's `context`. Without a
// schema, or on request, the context is edited as raw JSON.

import { useEffect, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { api } from './api.js';
import { formatJson, parseJsonObject } from './json-object.js';

/** @typedef {import('./types.js').JsonObject} JsonObject */
/** @typedef {import('./types.js').JsonSchema} JsonSchema */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * The main type of a property (`["string", "null"]` → `string`).
 * @param {JsonSchema} schema
 * @returns {string}
 */
export function fieldType(schema) {
  if (Array.isArray(schema.enum)) return 'enum';
  /** @type {unknown} */
  const type = schema.type;
  const types = Array.isArray(type) ? type.map(String) : typeof type === 'string' ? [type] : [];
  const anyOf = (schema.anyOf ?? []).map((s) => (typeof s.type === 'string' ? s.type : '')).filter(Boolean);
  const main = [...types, ...anyOf].find((t) => t !== 'null');
  return main ?? 'json';
}

/**
 * @param {{ assistantId: string, context: JsonObject, onChange: (context: JsonObject) => void }} props
 */
export function ConfigForm({ assistantId, context, onChange }) {
  const [schema, setSchema] = useState(/** @type {JsonSchema | null | undefined} */ (undefined));
  const [raw, setRaw] = useState(false);
  const [rawText, setRawText] = useState(formatJson(context));
  const [rawError, setRawError] = useState('');
  /** @type {[Record<string, string>, (value: Record<string, string>) => void]} */
  const [jsonErrors, setJsonErrors] = useState({});

  useEffect(() => {
    setSchema(undefined);
    if (!assistantId) return;
    api.assistantSchemas(assistantId).then(
      (schemas) => setSchema(schemas?.context_schema ?? schemas?.config_schema ?? null),
      () => setSchema(null),
    );
  }, [assistantId]);
  useEffect(() => {
    if (!raw) setRawText(formatJson(context));
  }, [context, raw]);

  const properties = Object.entries(schema?.properties ?? {});
  const useRaw = raw || (schema !== undefined && properties.length === 0);

  /** @param {string} key @param {unknown} value */
  const set = (key, value) => {
    const next = { ...context };
    if (value === undefined || value === '') delete next[key];
    else next[key] = value;
    onChange(next);
  };

  return html`
    <div class="config-form">
      ${schema === undefined && html`<p class="muted">Reading the graph's context schema…</p>`}
      ${
        !useRaw &&
        properties.map(([key, property]) => {
          const id = `context-${key}`;
          const type = fieldType(property);
          const hint = property.description && html`<p class="hint" id=${`${id}-hint`}>${property.description}</p>`;
          const described = property.description ? `${id}-hint` : undefined;
          const value = context[key];
          if (type === 'boolean')
            return html`<div class="field checkbox" key=${key}>
              <label><input id=${id} type="checkbox" checked=${value === true} aria-describedby=${described}
                onChange=${(/** @type {FieldEvent} */ e) => set(key, /** @type {HTMLInputElement} */ (e.currentTarget).checked)} /> ${key}</label>
              ${hint}
            </div>`;
          if (type === 'enum')
            return html`<div class="field" key=${key}>
              <label for=${id}>${key}</label>
              <select id=${id} value=${value === undefined ? '' : String(value)} aria-describedby=${described}
                onChange=${(/** @type {FieldEvent} */ e) =>
                  set(
                    key,
                    property.enum?.find((option) => String(option) === e.currentTarget.value),
                  )}>
                <option value="">(default)</option>
                ${(property.enum ?? []).map((option) => html`<option value=${String(option)}>${String(option)}</option>`)}
              </select>
              ${hint}
            </div>`;
          if (type === 'number' || type === 'integer')
            return html`<div class="field" key=${key}>
              <label for=${id}>${key}</label>
              <input id=${id} type="number" step=${type === 'integer' ? '1' : 'any'} value=${value === undefined ? '' : String(value)}
                placeholder=${property.default === undefined ? '' : String(property.default)} aria-describedby=${described}
                onInput=${(/** @type {FieldEvent} */ e) => set(key, e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))} />
              ${hint}
            </div>`;
          if (type === 'string') {
            const long = /prompt|instructions/i.test(key);
            const onInput = (/** @type {FieldEvent} */ e) => set(key, e.currentTarget.value);
            return html`<div class="field" key=${key}>
              <label for=${id}>${key}</label>
              ${
                long
                  ? html`<textarea id=${id} rows="3" value=${typeof value === 'string' ? value : ''} aria-describedby=${described} onInput=${onInput}></textarea>`
                  : html`<input id=${id} type="text" value=${typeof value === 'string' ? value : ''} placeholder=${property.default === undefined ? '' : String(property.default)} aria-describedby=${described} onInput=${onInput} />`
              }
              ${hint}
            </div>`;
          }
          const error = jsonErrors[key];
          return html`<div class=${`field${error ? ' invalid' : ''}`} key=${key}>
            <label for=${id}>${key} (JSON)</label>
            <textarea id=${id} class="code" rows="2" spellcheck="false" aria-describedby=${described}
              value=${value === undefined ? '' : JSON.stringify(value)}
              onChange=${(/** @type {FieldEvent} */ e) => {
                const text = e.currentTarget.value.trim();
                try {
                  set(key, text === '' ? undefined : JSON.parse(text));
                  setJsonErrors({ ...jsonErrors, [key]: '' });
                } catch (failure) {
                  setJsonErrors({ ...jsonErrors, [key]: `Not valid JSON: ${/** @type {Error} */ (failure).message}` });
                }
              }}></textarea>
            ${error && html`<p class="field-error">${error}</p>`}
            ${hint}
          </div>`;
        })
      }
      ${
        useRaw &&
        html`<div class=${`field${rawError ? ' invalid' : ''}`}>
          <label for="context-json">Context (JSON object)</label>
          <textarea id="context-json" class="code" rows="5" spellcheck="false" value=${rawText}
            aria-invalid=${rawError ? 'true' : undefined} aria-describedby=${rawError ? 'context-json-error' : undefined}
            onInput=${(/** @type {FieldEvent} */ e) => {
              setRawText(e.currentTarget.value);
              const parsed = parseJsonObject(e.currentTarget.value);
              setRawError(parsed.error ?? '');
              if (parsed.value) onChange(parsed.value);
            }}></textarea>
          ${rawError && html`<p class="field-error" id="context-json-error">${rawError}</p>`}
        </div>`
      }
      ${
        properties.length > 0 &&
        html`<label class="checkbox small"><input type="checkbox" checked=${raw} onChange=${(/** @type {FieldEvent} */ e) => setRaw(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} /> Edit as JSON</label>`
      }
      <p class="hint">Sent as the run's <code>context</code>; it starts from the assistant's.</p>
    </div>`;
}

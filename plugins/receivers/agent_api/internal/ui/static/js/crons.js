// @ts-check
// The Crons screen: the deployment's crons (`POST /runs/crons/search`) with their schedule, the
// assistant they run, where their runs go and when the next one is due; a form creating one
// (`POST /runs/crons`); enable/disable (`PATCH /runs/crons/{id}`); delete after confirmation
// (`DELETE /runs/crons/{id}`). Schedules are 5-field cron expressions read in UTC.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { api, send } from './api.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { shortId } from './format.js';
import { parseJsonObject } from './json-object.js';

/** @typedef {import('./types.js').Announce} Announce */
/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./types.js').Cron} Cron */
/** @typedef {import('./types.js').CronBody} CronBody */
/** @typedef {import('./types.js').JsonObject} JsonObject */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/** @param {string} value */
const id = (value) => encodeURIComponent(value);
/**
 * Sends one request and reads its JSON answer (`null` for a 204); `T` is what the endpoint answers.
 * @template T
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
const json = async (method, path, body) => {
  const response = await send(method, path, body);
  return response.status === 204 ? /** @type {T} */ (null) : response.json();
};
export const cronsApi = {
  /** @returns {Promise<Cron[]>} */
  search: () => json('POST', '/runs/crons/search', { limit: 1000, sort_by: 'created_at', sort_order: 'desc' }),
  /** @param {CronBody} body @returns {Promise<Cron>} */
  create: (body) => json('POST', '/runs/crons', body),
  /** @param {string} cronId @param {{ enabled: boolean }} body @returns {Promise<Cron>} */
  update: (cronId, body) => json('PATCH', `/runs/crons/${id(cronId)}`, body),
  /** @param {string} cronId @returns {Promise<unknown>} */
  remove: (cronId) => json('DELETE', `/runs/crons/${id(cronId)}`),
};

/**
 * Why a schedule cannot be a 5-field cron expression, or '' (the server checks it fully).
 * @param {string} schedule
 * @returns {string}
 */
export function scheduleProblem(schedule) {
  const text = schedule.trim();
  if (!text) return 'Enter a schedule, such as 0 9 * * 1-5 (09:00 UTC on weekdays).';
  if (text.startsWith('@')) return '';
  const fields = text.split(/\s+/).length;
  return fields === 5
    ? ''
    : `A schedule has 5 fields (minute hour day-of-month month day-of-week); this one has ${fields}.`;
}

/** @typedef {'assistant' | 'schedule' | 'input'} CronField */
/** @typedef {Partial<Record<CronField, string>>} CronFieldErrors */

/**
 * @param {{ assistants: Assistant[], onCreated: (cron: Cron) => void }} props
 */
function CronForm({ assistants, onCreated }) {
  const [assistantId, setAssistantId] = useState('');
  const [schedule, setSchedule] = useState('0 9 * * *');
  const [message, setMessage] = useState('');
  const [input, setInput] = useState('');
  const [keep, setKeep] = useState(false);
  const [errors, setErrors] = useState(/** @type {CronFieldErrors} */ ({}));
  const [serverError, setServerError] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useRef(/** @type {HTMLFormElement | null} */ (null));
  useEffect(() => {
    if (!assistantId && assistants.length > 0) setAssistantId(assistants[0].assistant_id);
  }, [assistants]);

  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    setServerError('');
    /** @type {CronFieldErrors} */
    const found = {};
    const problem = scheduleProblem(schedule);
    if (problem) found.schedule = problem;
    if (!assistantId) found.assistant = 'Choose the assistant to run.';
    /** @type {JsonObject} */
    let extra = {};
    if (input.trim()) {
      const parsed = parseJsonObject(input);
      if (parsed.error) found.input = parsed.error;
      else extra = /** @type {JsonObject} */ (parsed.value);
    }
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) {
      /** @type {HTMLElement | null | undefined} */ (form.current?.querySelector(`#cron-${first}`))?.focus();
      return;
    }
    /** @type {CronBody} */
    const body = { assistant_id: assistantId, schedule: schedule.trim(), on_run_completed: keep ? 'keep' : 'delete' };
    /** @type {JsonObject} */
    const runInput = { ...extra };
    if (message.trim()) runInput.messages = [{ role: 'user', content: message.trim() }];
    if (Object.keys(runInput).length > 0) body.input = runInput;
    setBusy(true);
    try {
      const created = await cronsApi.create(body);
      setMessage('');
      setInput('');
      onCreated(created);
    } catch (failure) {
      setServerError(failure instanceof Error ? failure.message : String(failure));
      /** @type {HTMLElement | null | undefined} */ (form.current?.querySelector('#cron-schedule'))?.focus();
    } finally {
      setBusy(false);
    }
  };

  /** @param {CronField} key */
  const field = (key) => (errors[key] ? 'field invalid' : 'field');
  /** @param {CronField} key @param {string} [hint] */
  const describedBy = (key, hint) => [errors[key] && `cron-${key}-error`, hint].filter(Boolean).join(' ') || undefined;
  return html`
    <form ref=${form} class="cron-form" aria-labelledby="cron-create-title" onSubmit=${submit} novalidate>
      <h2 id="cron-create-title">New cron</h2>
      ${serverError && html`<div class="error-banner" role="alert">${serverError}</div>`}
      <div class=${field('assistant')}>
        <label for="cron-assistant">Assistant</label>
        <select id="cron-assistant" value=${assistantId} aria-invalid=${errors.assistant ? 'true' : undefined}
          aria-describedby=${describedBy('assistant')} onChange=${(/** @type {FieldEvent} */ e) => setAssistantId(e.currentTarget.value)}>
          ${assistants.map((a) => html`<option value=${a.assistant_id}>${a.name} (${a.graph_id})</option>`)}
        </select>
        ${errors.assistant && html`<p id="cron-assistant-error" class="field-error">${errors.assistant}</p>`}
      </div>
      <div class=${field('schedule')}>
        <label for="cron-schedule">Schedule (UTC)</label>
        <input id="cron-schedule" class="code" value=${schedule} autocomplete="off" spellcheck="false"
          aria-invalid=${errors.schedule ? 'true' : undefined} aria-describedby=${describedBy('schedule', 'cron-schedule-hint')}
          onInput=${(/** @type {FieldEvent} */ e) => setSchedule(e.currentTarget.value)} />
        <p id="cron-schedule-hint" class="hint">minute hour day-of-month month day-of-week, e.g. <code>*/15 * * * *</code> every 15 minutes.</p>
        ${errors.schedule && html`<p id="cron-schedule-error" class="field-error">${errors.schedule}</p>`}
      </div>
      <div class="field">
        <label for="cron-message">Message (optional)</label>
        <textarea id="cron-message" rows="2" value=${message} onInput=${(/** @type {FieldEvent} */ e) => setMessage(e.currentTarget.value)}></textarea>
      </div>
      <div class=${field('input')}>
        <label for="cron-input">Other input (JSON object, optional)</label>
        <textarea id="cron-input" class="code" rows="2" value=${input} aria-invalid=${errors.input ? 'true' : undefined}
          aria-describedby=${describedBy('input')} onInput=${(/** @type {FieldEvent} */ e) => setInput(e.currentTarget.value)}></textarea>
        ${errors.input && html`<p id="cron-input-error" class="field-error">${errors.input}</p>`}
      </div>
      <div class="field">
        <label class="checkbox"><input id="cron-keep" type="checkbox" checked=${keep} onChange=${(/** @type {Event & { currentTarget: HTMLInputElement }} */ e) => setKeep(e.currentTarget.checked)} /> Keep each run’s thread</label>
      </div>
      <div class="actions"><button type="submit" disabled=${busy}>Create cron</button></div>
    </form>`;
}

/**
 * @param {{ announce: Announce }} props
 */
export function CronsPage({ announce }) {
  const [crons, setCrons] = useState(/** @type {Cron[]} */ ([]));
  const [assistants, setAssistants] = useState(/** @type {Assistant[]} */ ([]));
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [confirming, setConfirming] = useState(/** @type {Cron | null} */ (null));

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const [found, all] = await Promise.all([cronsApi.search(), api.searchAssistants({ limit: 1000 })]);
      setCrons(found);
      setAssistants(all);
      setError('');
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);

  /** @param {string} assistantId */
  const nameOf = (assistantId) => assistants.find((a) => a.assistant_id === assistantId)?.name ?? shortId(assistantId);
  /** @param {Cron} cron */
  const toggle = async (cron) => {
    try {
      await cronsApi.update(cron.cron_id, { enabled: !cron.enabled });
      announce(`${cron.enabled ? 'Disabled' : 'Enabled'} the cron “${cron.schedule}” of ${nameOf(cron.assistant_id)}.`);
      await load();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  const remove = async () => {
    const cron = /** @type {Cron} */ (confirming);
    setConfirming(null);
    try {
      await cronsApi.remove(cron.cron_id);
      announce(`Deleted the cron “${cron.schedule}” of ${nameOf(cron.assistant_id)}.`);
      await load();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };

  return html`
    <div class="split">
      <section class="list" aria-labelledby="crons-title">
        <div class="list-head"><h1 id="crons-title">Crons</h1></div>
        ${error && html`<div class="error-banner" role="alert">${error}</div>`}
        ${
          !loading && crons.length === 0 && !error
            ? html`<p class="empty">No crons yet.</p>`
            : html`
          <table class="assistants crons" aria-busy=${loading ? 'true' : 'false'}>
            <caption class="visually-hidden">Crons</caption>
            <thead><tr><th scope="col">Schedule</th><th scope="col">Assistant</th><th scope="col">Runs on</th><th scope="col">Next run</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              ${crons.map(
                (cron) => html`
                <tr key=${cron.cron_id} data-cron-id=${cron.cron_id}>
                  <th scope="row"><code>${cron.schedule}</code>${!cron.enabled && html` <span class="badge">disabled</span>`}</th>
                  <td>${nameOf(cron.assistant_id)}</td>
                  <td>${cron.thread_id ? html`thread <code>${shortId(cron.thread_id)}</code>` : 'a new thread each time'}</td>
                  <td class="muted">${cron.enabled ? formatTime(cron.next_run_date) || 'never' : '—'}</td>
                  <td class="row-actions">
                    <button type="button" class="secondary small" onClick=${() => toggle(cron)}
                      aria-label=${`${cron.enabled ? 'Disable' : 'Enable'} cron ${cron.schedule} of ${nameOf(cron.assistant_id)}`}>${cron.enabled ? 'Disable' : 'Enable'}</button>
                    <button type="button" class="danger small" onClick=${() => setConfirming(cron)}
                      aria-label=${`Delete cron ${cron.schedule} of ${nameOf(cron.assistant_id)}`}>Delete</button>
                  </td>
                </tr>`,
              )}
            </tbody>
          </table>`
        }
      </section>
      <section class="detail">
        <${CronForm} assistants=${assistants} onCreated=${(/** @type {Cron} */ cron) => {
          announce(`Created the cron “${cron.schedule}”; next run ${formatTime(cron.next_run_date) || 'never'}.`);
          load();
        }} />
      </section>
      ${
        confirming &&
        html`<${ConfirmDialog} title="Delete this cron?" confirmLabel="Delete cron" onConfirm=${remove} onCancel=${() => setConfirming(null)}>
          <p>The cron “${confirming.schedule}” of ${nameOf(confirming.assistant_id)} will start no more runs. Runs it started are kept.</p>
        <//>`
      }
    </div>`;
}

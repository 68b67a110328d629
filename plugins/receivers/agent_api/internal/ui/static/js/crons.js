// The Crons screen: the deployment's crons (`POST /runs/crons/search`) with their schedule, the
// assistant they run, where their runs go and when the next one is due; a form creating one
// (`POST /runs/crons`); enable/disable (`PATCH /runs/crons/{id}`); delete after confirmation
// (`DELETE /runs/crons/{id}`). Schedules are 5-field cron expressions read in UTC.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, send } from './api.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { formatTime, shortId } from './format.js';
import { html } from './html.js';
import { parseJsonObject } from './json-object.js';

const id = (value) => encodeURIComponent(value);
const json = async (method, path, body) => {
  const response = await send(method, path, body);
  return response.status === 204 ? null : response.json();
};
export const cronsApi = {
  search: () => json('POST', '/runs/crons/search', { limit: 1000, sort_by: 'created_at', sort_order: 'desc' }),
  create: (body) => json('POST', '/runs/crons', body),
  update: (cronId, body) => json('PATCH', `/runs/crons/${id(cronId)}`, body),
  remove: (cronId) => json('DELETE', `/runs/crons/${id(cronId)}`),
};

/** Why a schedule cannot be a 5-field cron expression, or '' (the server checks it fully). */
export function scheduleProblem(schedule) {
  const text = schedule.trim();
  if (!text) return 'Enter a schedule, such as 0 9 * * 1-5 (09:00 UTC on weekdays).';
  if (text.startsWith('@')) return '';
  const fields = text.split(/\s+/).length;
  return fields === 5
    ? ''
    : `A schedule has 5 fields (minute hour day-of-month month day-of-week); this one has ${fields}.`;
}

function CronForm({ assistants, onCreated }) {
  const [assistantId, setAssistantId] = useState('');
  const [schedule, setSchedule] = useState('0 9 * * *');
  const [message, setMessage] = useState('');
  const [input, setInput] = useState('');
  const [keep, setKeep] = useState(false);
  const [errors, setErrors] = useState({});
  const [serverError, setServerError] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useRef(null);
  useEffect(() => {
    if (!assistantId && assistants.length > 0) setAssistantId(assistants[0].assistant_id);
  }, [assistants]);

  const submit = async (event) => {
    event.preventDefault();
    setServerError('');
    const found = {};
    const problem = scheduleProblem(schedule);
    if (problem) found.schedule = problem;
    if (!assistantId) found.assistant = 'Choose the assistant to run.';
    let extra = {};
    if (input.trim()) {
      const parsed = parseJsonObject(input);
      if (parsed.error) found.input = parsed.error;
      else extra = parsed.value;
    }
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) {
      form.current.querySelector(`#cron-${first}`)?.focus();
      return;
    }
    const body = { assistant_id: assistantId, schedule: schedule.trim(), on_run_completed: keep ? 'keep' : 'delete' };
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
      setServerError(failure.message);
      form.current.querySelector('#cron-schedule')?.focus();
    } finally {
      setBusy(false);
    }
  };

  const field = (key) => (errors[key] ? 'field invalid' : 'field');
  const describedBy = (key, hint) => [errors[key] && `cron-${key}-error`, hint].filter(Boolean).join(' ') || undefined;
  return html`
    <form ref=${form} class="cron-form" aria-labelledby="cron-create-title" onSubmit=${submit} novalidate>
      <h2 id="cron-create-title">New cron</h2>
      ${serverError && html`<div class="error-banner" role="alert">${serverError}</div>`}
      <div class=${field('assistant')}>
        <label for="cron-assistant">Assistant</label>
        <select id="cron-assistant" value=${assistantId} aria-invalid=${errors.assistant ? 'true' : undefined}
          aria-describedby=${describedBy('assistant')} onChange=${(e) => setAssistantId(e.currentTarget.value)}>
          ${assistants.map((a) => html`<option value=${a.assistant_id}>${a.name} (${a.graph_id})</option>`)}
        </select>
        ${errors.assistant && html`<p id="cron-assistant-error" class="field-error">${errors.assistant}</p>`}
      </div>
      <div class=${field('schedule')}>
        <label for="cron-schedule">Schedule (UTC)</label>
        <input id="cron-schedule" class="code" value=${schedule} autocomplete="off" spellcheck="false"
          aria-invalid=${errors.schedule ? 'true' : undefined} aria-describedby=${describedBy('schedule', 'cron-schedule-hint')}
          onInput=${(e) => setSchedule(e.currentTarget.value)} />
        <p id="cron-schedule-hint" class="hint">minute hour day-of-month month day-of-week, e.g. <code>*/15 * * * *</code> every 15 minutes.</p>
        ${errors.schedule && html`<p id="cron-schedule-error" class="field-error">${errors.schedule}</p>`}
      </div>
      <div class="field">
        <label for="cron-message">Message (optional)</label>
        <textarea id="cron-message" rows="2" value=${message} onInput=${(e) => setMessage(e.currentTarget.value)}></textarea>
      </div>
      <div class=${field('input')}>
        <label for="cron-input">Other input (JSON object, optional)</label>
        <textarea id="cron-input" class="code" rows="2" value=${input} aria-invalid=${errors.input ? 'true' : undefined}
          aria-describedby=${describedBy('input')} onInput=${(e) => setInput(e.currentTarget.value)}></textarea>
        ${errors.input && html`<p id="cron-input-error" class="field-error">${errors.input}</p>`}
      </div>
      <div class="field">
        <label class="checkbox"><input id="cron-keep" type="checkbox" checked=${keep} onChange=${(e) => setKeep(e.currentTarget.checked)} /> Keep each run’s thread</label>
      </div>
      <div class="actions"><button type="submit" disabled=${busy}>Create cron</button></div>
    </form>`;
}

export function CronsPage({ announce }) {
  const [crons, setCrons] = useState([]);
  const [assistants, setAssistants] = useState([]);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [confirming, setConfirming] = useState(null);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const [found, all] = await Promise.all([cronsApi.search(), api.searchAssistants({ limit: 1000 })]);
      setCrons(found);
      setAssistants(all);
      setError('');
    } catch (failure) {
      setError(failure.message);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);

  const nameOf = (assistantId) => assistants.find((a) => a.assistant_id === assistantId)?.name ?? shortId(assistantId);
  const toggle = async (cron) => {
    try {
      await cronsApi.update(cron.cron_id, { enabled: !cron.enabled });
      announce(`${cron.enabled ? 'Disabled' : 'Enabled'} the cron “${cron.schedule}” of ${nameOf(cron.assistant_id)}.`);
      await load();
    } catch (failure) {
      setError(failure.message);
    }
  };
  const remove = async () => {
    const cron = confirming;
    setConfirming(null);
    try {
      await cronsApi.remove(cron.cron_id);
      announce(`Deleted the cron “${cron.schedule}” of ${nameOf(cron.assistant_id)}.`);
      await load();
    } catch (failure) {
      setError(failure.message);
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
        <${CronForm} assistants=${assistants} onCreated=${(cron) => {
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

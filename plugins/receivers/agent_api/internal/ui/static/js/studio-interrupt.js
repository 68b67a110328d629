// @ts-check
// Answering an interrupt in place. The payload decides the form:
//   - a review request of LangChain's human-in-the-loop middleware (`action_requests` +
//     `review_configs`, snake_case or camelCase): per action, the decisions it allows (approve,
//     edit the arguments, reject with a reason, respond), sent as `{decisions: [...]}`;
//   - the older HumanInterrupt (`action_request` + `config.allow_*`): accept, edit, respond,
//     ignore, sent as a one-element list of HumanResponse, as Agent Inbox does;
//   - anything else: the payload as JSON and a free resume value (JSON, or plain text).
// A run paused at a breakpoint (interrupt_before/after) has no payload: it continues.

import { useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { formatJson } from './json-object.js';

/** @typedef {import('./types.js').Interrupt} Interrupt */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * @typedef {object} ReviewAction
 * @property {string} name
 * @property {unknown} args
 * @property {string} [description]
 * @property {string[]} allowed Decision types, in the payload's vocabulary.
 */

/**
 * What kind of interrupt `value` is, with its actions.
 * @typedef {{ kind: 'hitl', actions: ReviewAction[] }
 *   | { kind: 'legacy', actions: ReviewAction[] }
 *   | { kind: 'generic' }} InterruptForm
 */

/** @param {unknown} value @returns {Record<string, any>} */
const record = (value) =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? /** @type {Record<string, any>} */ (value)
    : {};

/**
 * @param {unknown} value An interrupt's value.
 * @returns {InterruptForm}
 */
export function interruptForm(value) {
  const payload = record(Array.isArray(value) ? value[0] : value);
  const requests = payload.action_requests ?? payload.actionRequests;
  const configs = payload.review_configs ?? payload.reviewConfigs;
  if (Array.isArray(requests) && requests.length > 0 && Array.isArray(configs)) {
    return {
      kind: 'hitl',
      actions: requests.map((request, index) => {
        const config = record(
          configs.find((c) => record(c).action_name === request?.name || record(c).actionName === request?.name) ??
            configs[index],
        );
        const allowed = config.allowed_decisions ?? config.allowedDecisions;
        return {
          name: String(request?.name ?? ''),
          args: request?.args ?? request?.arguments ?? {},
          description: typeof request?.description === 'string' ? request.description : undefined,
          allowed: Array.isArray(allowed) ? allowed.map(String) : ['approve', 'reject'],
        };
      }),
    };
  }
  const legacy = Array.isArray(value) ? value : [value];
  if (legacy.every((item) => record(item).action_request && record(item).config)) {
    return {
      kind: 'legacy',
      actions: legacy.map((item) => {
        const { action_request: request, config, description } = record(item);
        const allowed = [
          config.allow_accept && 'accept',
          config.allow_edit && 'edit',
          config.allow_respond && 'response',
          config.allow_ignore && 'ignore',
        ].filter(Boolean);
        return {
          name: String(record(request).action ?? ''),
          args: record(request).args ?? {},
          description: typeof description === 'string' ? description : undefined,
          allowed: /** @type {string[]} */ (allowed),
        };
      }),
    };
  }
  return { kind: 'generic' };
}

/** @type {Record<string, string>} */
const DECISION_LABEL = {
  approve: 'Approve',
  accept: 'Accept',
  edit: 'Edit',
  reject: 'Reject',
  respond: 'Respond',
  response: 'Respond',
  ignore: 'Ignore',
};

/**
 * One decision being composed.
 * @typedef {object} Choice
 * @property {string} type
 * @property {string} args The edited arguments, as JSON text.
 * @property {string} message The reason (reject) or the answer (respond).
 */

/**
 * The resume value for the choices, in the payload's own vocabulary; `{error}` when an edit is
 * not a JSON object or a required text is missing.
 * @param {InterruptForm} form
 * @param {Choice[]} choices
 * @returns {{ value: unknown, error?: undefined } | { error: string, value?: undefined }}
 */
export function resumeValue(form, choices) {
  if (form.kind === 'generic') return { error: 'No form for this payload.' };
  /** @type {unknown[]} */
  const decisions = [];
  for (const [index, action] of form.actions.entries()) {
    const choice = choices[index];
    /** @type {unknown} */
    let args;
    if (choice.type === 'edit') {
      try {
        args = JSON.parse(choice.args);
      } catch (error) {
        return { error: `The arguments of ${action.name} are not valid JSON: ${/** @type {Error} */ (error).message}` };
      }
    }
    if ((choice.type === 'respond' || choice.type === 'response') && !choice.message.trim())
      return { error: `Write the response for ${action.name}.` };
    if (form.kind === 'hitl') {
      if (choice.type === 'edit') decisions.push({ type: 'edit', edited_action: { name: action.name, args } });
      else if (choice.type === 'reject')
        decisions.push(choice.message.trim() ? { type: 'reject', message: choice.message.trim() } : { type: 'reject' });
      else if (choice.type === 'respond') decisions.push({ type: 'respond', message: choice.message.trim() });
      else decisions.push({ type: choice.type });
    } else if (choice.type === 'accept')
      decisions.push({ type: 'accept', args: { action: action.name, args: action.args } });
    else if (choice.type === 'edit') decisions.push({ type: 'edit', args: { action: action.name, args } });
    else if (choice.type === 'response') decisions.push({ type: 'response', args: choice.message.trim() });
    else decisions.push({ type: 'ignore', args: null });
  }
  return { value: form.kind === 'hitl' ? { decisions } : decisions };
}

/**
 * A free resume value: JSON when the text is JSON, else the text itself.
 * @param {string} text
 * @returns {unknown}
 */
export function freeResumeValue(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * @param {{
 *   interrupts: Interrupt[],
 *   next: string[],
 *   busy: boolean,
 *   onResume: (value: unknown, label: string) => void,
 *   onContinue: () => void,
 * }} props
 */
export function InterruptPanel({ interrupts, next, busy, onResume, onContinue }) {
  if (interrupts.length === 0) {
    if (next.length === 0) return null;
    return html`
      <section class="interrupt" aria-labelledby="interrupt-title">
        <h3 id="interrupt-title">Paused before ${next.join(', ')}</h3>
        <p class="hint">The run stopped at a breakpoint. Continue runs the next step; edit the state first to change what it sees.</p>
        <div class="actions"><button type="button" onClick=${onContinue} disabled=${busy}>Continue</button></div>
      </section>`;
  }
  // The first pending interrupt is answered first; the others follow once it is resumed.
  const interrupt = interrupts[0];
  return html`<${InterruptForm} key=${interrupt.id ?? formatJson(interrupt.value)} interrupt=${interrupt} count=${interrupts.length} busy=${busy} onResume=${onResume} />`;
}

/**
 * @param {{ interrupt: Interrupt, count: number, busy: boolean, onResume: (value: unknown, label: string) => void }} props
 */
function InterruptForm({ interrupt, count, busy, onResume }) {
  const form = interruptForm(interrupt.value);
  const actions = form.kind === 'generic' ? [] : form.actions;
  const [choices, setChoices] = useState(
    /** @type {Choice[]} */ (
      actions.map((action) => ({ type: action.allowed[0] ?? 'approve', args: formatJson(action.args), message: '' }))
    ),
  );
  const [free, setFree] = useState('');
  const [error, setError] = useState('');

  /** @param {number} index @param {Partial<Choice>} change */
  const choose = (index, change) =>
    setChoices((current) => current.map((c, i) => (i === index ? { ...c, ...change } : c)));

  /** @param {Event} event */
  const submit = (event) => {
    event.preventDefault();
    if (form.kind === 'generic') {
      if (!free.trim()) {
        setError('Write a resume value: JSON, or plain text.');
        return;
      }
      setError('');
      onResume(freeResumeValue(free), `resume: ${free.trim()}`);
      return;
    }
    const result = resumeValue(form, choices);
    if (result.error !== undefined) {
      setError(result.error);
      return;
    }
    setError('');
    onResume(result.value, `resume: ${choices.map((c) => c.type).join(', ')}`);
  };

  return html`
    <section class="interrupt" aria-labelledby="interrupt-title">
      <h3 id="interrupt-title">Waiting for your answer${count > 1 ? ` (1 of ${count})` : ''}</h3>
      <form onSubmit=${submit} class="interrupt-form">
        ${
          form.kind === 'generic' &&
          html`
          <pre class="code interrupt-payload" data-testid="interrupt-payload">${formatJson(interrupt.value)}</pre>
          <div class=${`field${error ? ' invalid' : ''}`}>
            <label for="resume-value">Resume value (JSON, or plain text)</label>
            <textarea id="resume-value" class="code" rows="3" value=${free} onInput=${(/** @type {FieldEvent} */ e) => setFree(e.currentTarget.value)}
              aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? 'resume-error' : undefined}></textarea>
          </div>`
        }
        ${actions.map(
          (action, index) => html`
            <fieldset class="review-action" key=${index}>
              <legend>${action.description ?? 'Review'} <code>${action.name}</code></legend>
              <pre class="code interrupt-payload" data-testid="interrupt-payload">${formatJson(action.args)}</pre>
              <div class="decisions" role="radiogroup" aria-label=${`Decision on ${action.name}`}>
                ${action.allowed.map(
                  (type) => html`<label class="decision" key=${type}>
                    <input type="radio" name=${`decision-${index}`} value=${type} checked=${choices[index]?.type === type}
                      onChange=${() => choose(index, { type })} />
                    ${DECISION_LABEL[type] ?? type}
                  </label>`,
                )}
              </div>
              ${
                choices[index]?.type === 'edit' &&
                html`<div class="field">
                <label for=${`edit-args-${index}`}>Arguments of ${action.name} (JSON)</label>
                <textarea id=${`edit-args-${index}`} class="code" rows="4" spellcheck="false" value=${choices[index].args}
                  onInput=${(/** @type {FieldEvent} */ e) => choose(index, { args: e.currentTarget.value })}></textarea>
              </div>`
              }
              ${
                ['reject', 'respond', 'response'].includes(choices[index]?.type) &&
                html`<div class="field">
                <label for=${`decision-message-${index}`}>${choices[index].type === 'reject' ? 'Reason (optional)' : 'Response'}</label>
                <textarea id=${`decision-message-${index}`} rows="2" value=${choices[index].message}
                  onInput=${(/** @type {FieldEvent} */ e) => choose(index, { message: e.currentTarget.value })}></textarea>
              </div>`
              }
            </fieldset>`,
        )}
        ${error && html`<p class="field-error" id="resume-error" role="alert">${error}</p>`}
        <div class="actions">
          <button type="submit" disabled=${busy}>${form.kind === 'generic' ? 'Resume' : 'Send decision'}</button>
        </div>
      </form>
    </section>`;
}

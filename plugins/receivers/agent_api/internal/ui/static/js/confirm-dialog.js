// @ts-check
// A modal confirmation built on <dialog>: the browser traps focus inside it, Escape cancels, and
// focus returns to the button that opened it.

import { useEffect, useRef } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';

/**
 * @param {{ title: string, children: import('@tracepipe/webui/html.js').Children, confirmLabel: string, onConfirm: () => void, onCancel: () => void }} props
 */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onCancel }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  useEffect(() => {
    const opener = /** @type {HTMLElement | null} */ (document.activeElement);
    /** @type {HTMLDialogElement} */ (dialog.current).showModal();
    return () => opener?.focus?.();
  }, []);
  /** @param {SubmitEvent} event */
  const confirm = (event) => {
    event.preventDefault();
    onConfirm();
  };
  return html`
    <dialog ref=${dialog} class="dialog" role="alertdialog" aria-labelledby="confirm-title" aria-describedby="confirm-body" onCancel=${onCancel}>
      <form onSubmit=${confirm}>
        <h2 id="confirm-title">${title}</h2>
        <div id="confirm-body">${children}</div>
        <div class="actions">
          <button type="button" class="secondary" autofocus onClick=${onCancel}>Cancel</button>
          <button type="submit" class="danger">${confirmLabel}</button>
        </div>
      </form>
    </dialog>`;
}

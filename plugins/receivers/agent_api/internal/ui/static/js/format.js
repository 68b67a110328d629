// @ts-check
// Display formatting shared by the screens: short times, short ids (full times:
// @tracepipe/webui/format.js).

/**
 * Time of day for today, else the date: short enough for a select option.
 * @param {string | undefined} iso
 * @returns {string}
 */
export function formatShortTime(iso) {
  const date = new Date(/** @type {string} */ (iso));
  if (Number.isNaN(date.getTime())) return iso ?? '';
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    : date.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/**
 * The first block of a UUID: enough to tell threads apart in a list.
 * @param {string | null | undefined} id
 * @returns {string}
 */
export function shortId(id) {
  return String(id ?? '').split('-')[0];
}

/**
 * Whether `assistant` is a graph's system assistant (the server creates one per graph).
 * @param {import('./types.js').Assistant | null | undefined} assistant
 * @returns {boolean}
 */
export const isSystemAssistant = (assistant) => assistant?.metadata?.created_by === 'system';

// @ts-check
// Display formatting both web interfaces use: times in the reader's locale.

/**
 * A time as the reader's locale writes it (date and time of day); the text itself when it is no time.
 * @param {string | null | undefined} iso
 * @returns {string}
 */
export function formatTime(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

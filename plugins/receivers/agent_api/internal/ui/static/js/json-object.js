// @ts-check
// Parsing of the JSON-object fields (configuration `context`, `metadata`): the API takes objects,
// so anything else gets a message saying what is wrong and where, shown next to the field.

/** @typedef {import('./types.js').JsonObject} JsonObject */

/**
 * What parseJsonObject finds: the object, or the message to show next to the field.
 * @typedef {{ value: JsonObject, error?: undefined } | { value?: undefined, error: string }} JsonObjectResult
 */

/**
 * `{value}` for a JSON object (empty text counts as `{}`), `{error}` otherwise.
 * @param {string} text
 * @returns {JsonObjectResult}
 */
export function parseJsonObject(text) {
  if (text.trim() === '') return { value: {} };
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${/** @type {Error} */ (error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      error: `Must be a JSON object such as {"key": "value"}, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`,
    };
  }
  return { value: /** @type {JsonObject} */ (value) };
}

/**
 * Pretty JSON for a field or a panel; `{}` for nothing.
 * @param {unknown} value
 * @returns {string}
 */
export function formatJson(value) {
  return JSON.stringify(value ?? {}, null, 2);
}

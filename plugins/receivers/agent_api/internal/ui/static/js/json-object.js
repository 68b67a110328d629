// Parsing of the JSON-object fields (configuration `context`, `metadata`): the API takes objects,
// so anything else gets a message saying what is wrong and where, shown next to the field.

/** `{value}` for a JSON object (empty text counts as `{}`), `{error}` otherwise. */
export function parseJsonObject(text) {
  if (text.trim() === '') return { value: {} };
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${error.message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      error: `Must be a JSON object such as {"key": "value"}, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`,
    };
  }
  return { value };
}

export function formatJson(value) {
  return JSON.stringify(value ?? {}, null, 2);
}

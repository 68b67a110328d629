// Reading JSON request bodies within limits. The size limit is Fastify's (`max_body_bytes`, a
// 413 before any parsing); the depth limit is checked here, on the text, before `JSON.parse`:
// a body nested thousands of levels deep parses fine but then overflows the stack of whatever
// walks it recursively (validation, merging, serialisation, SQLite JSON), which used to be a 500
// with an ERROR log per request. The scan is a loop, so it cannot overflow itself.

import { ApiInvalidError, ApiMalformedJsonError } from '../../errors.ts';

/** Whether the objects and arrays in a JSON text nest deeper than `max` (strings are skipped). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c /* \ */) index++;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/**
 * The JSON value of a request body: `undefined` for an empty one (the SDKs post some without a
 * body), a 400 for malformed JSON, a 422 for nesting deeper than `maxDepth`.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return undefined;
  if (jsonDepthExceeds(text, maxDepth)) {
    throw new ApiInvalidError([
      `body: JSON nested deeper than ${maxDepth} levels of objects and arrays (max_json_depth)`,
    ]);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiMalformedJsonError();
  }
}

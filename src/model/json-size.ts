// The size of a value's JSON text, estimated by walking it instead of serialising it. The batch
// processor sizes every run it takes (for its memory bound and to fill upload batches by bytes);
// serialising each run for that, and again when the exporter writes it, was one of the proxy's
// largest costs on GenAI payloads (10 % of its CPU profile on bench/pipeline's realistic spans;
// this walk takes about a third of that: 3 %).
//
// The estimate counts every character of every string as one byte and no escapes: it is exact for
// ASCII text without quotes, backslashes or control characters, and below the UTF-8 size by the
// extra bytes of other characters and of escapes. Where a limit must hold exactly, serialise.
// A value shared by many runs (src/model/shared-json.ts) counts the characters of its JSON text.

import { sharedJsonText } from './shared-json.ts';

/** Approximate byte length of `JSON.stringify(value)` (0 for a value JSON leaves out). */
export function estimateJsonBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return numberBytes(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return numberBytes(Number(value));
    case 'object': {
      if (value === null) return 4;
      const shared = sharedJsonText(value);
      if (shared !== undefined) return shared.length;
      if (Array.isArray(value)) return arrayBytes(value);
      return objectBytes(value as Record<string, unknown>);
    }
    default:
      return 0; // undefined, functions and symbols have no JSON form
  }
}

function arrayBytes(array: readonly unknown[]): number {
  // Brackets and commas; an element with no JSON form is written as `null`.
  let bytes = 2 + Math.max(0, array.length - 1);
  for (let i = 0; i < array.length; i++) bytes += estimateJsonBytes(array[i]) || 4;
  return bytes;
}

function objectBytes(object: Record<string, unknown>): number {
  let bytes = 2;
  let members = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const member = estimateJsonBytes(object[key]);
    if (member === 0) continue; // JSON leaves the member out
    bytes += key.length + 3 + member; // "key": and the value
    members++;
  }
  return bytes + Math.max(0, members - 1);
}

function numberBytes(value: number): number {
  if (!Number.isFinite(value)) return 4; // null
  // Whole numbers are the common case (token counts, ports): count digits without making a string.
  if (Number.isInteger(value) && Math.abs(value) < 1e15) {
    let digits = value < 0 ? 2 : 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) digits++;
    return digits;
  }
  return String(value).length;
}

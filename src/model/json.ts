// JSON text of pipeline data. Spans carry `bigint` (timestamps, int attributes) and `Uint8Array`
// (bytes attributes), which JSON.stringify cannot write: bigints become decimal strings, as OTLP's
// JSON encoding writes 64-bit integers, and bytes become base64.

export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  return value;
}

export function toJsonLine(value: unknown): string {
  return JSON.stringify(value, jsonReplacer);
}

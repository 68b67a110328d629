// Trace and span ids between their wire forms (raw bytes in protobuf; hex or base64 text in JSON)
// and the model's lowercase hex strings.

/** Bytes in a valid trace id and span id (OTLP: 16 and 8; anything else is invalid). */
export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

type HexSliceable = Buffer & { hexSlice(start: number, end: number): string };

/**
 * Lowercase hex of `bytes[start, end)`. Buffer's own hexSlice (what toString('hex') ends in, without
 * its argument checks) makes one flat string; a lookup table joined in JS made a chain of cons
 * strings per id, which the first Map lookup or charCodeAt then had to flatten (bench/pipeline
 * stages.ts, `--allocations`).
 */
export function bytesToHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (buffer as HexSliceable).hexSlice(start, end);
}

/** The bytes of an even-length hex string (the caller has checked it with `isHex`). */
export function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function isHex(text: string): boolean {
  return text.length % 2 === 0 && HEX.test(text);
}

/**
 * Reads a JSON id of `byteLength` bytes. OpenTelemetry SDK exporters write hex (OTLP/HTTP JSON
 * rule); protobuf's general JSON mapping writes `bytes` as base64. The two are
 * told apart by length: 2×bytes hex characters is hex, otherwise padded base64 of exactly
 * `byteLength` bytes. Returns lowercase hex, or undefined when the text is neither.
 */
export function jsonIdToHex(text: string, byteLength: number): string | undefined {
  if (text.length === byteLength * 2 && HEX.test(text)) return text.toLowerCase();
  if (text.length === Math.ceil(byteLength / 3) * 4 && BASE64.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length === byteLength) return bytes.toString('hex');
  }
  return undefined;
}

/** A short description of a JSON id that `jsonIdToHex` refused, for the rejection message. */
export function describeBadJsonId(text: string, byteLength: number): string {
  const base64Length = Math.ceil(byteLength / 3) * 4;
  return `must be ${byteLength * 2} hex or ${base64Length} base64 characters (${byteLength} bytes), got ${text.length} characters`;
}

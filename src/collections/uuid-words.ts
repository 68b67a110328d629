// UUID text ↔ four 32-bit words, and a hash of those words: what the compact tables that remember
// facts per run or per trace (src/collections/uuid-map.ts, the batcher's dotted order memory) key
// their typed arrays with instead of holding UUID strings on the JS heap.

const DASH = 45;

// Character code → hex digit value, -1 for any other character; hex digit → character code.
const HEX_VALUE = new Int8Array(0x10000).fill(-1);
const HEX_CHAR = new Uint8Array(16);
for (let i = 0; i < 16; i++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_CHAR[i] = '0123456789abcdef'.charCodeAt(i);
}

export const UUID_CHARS = 36;

/** Parses the lower-case 8-4-4-4-12 UUID at `start` into four words; false when there is none. */
export function parseUuid(text: string, start: number, out: Uint32Array, at: number): boolean {
  if (
    text.charCodeAt(start + 8) !== DASH ||
    text.charCodeAt(start + 13) !== DASH ||
    text.charCodeAt(start + 18) !== DASH ||
    text.charCodeAt(start + 23) !== DASH
  ) {
    return false;
  }
  const a = hex4(text, start);
  const b = hex4(text, start + 4);
  const c = hex4(text, start + 9);
  const d = hex4(text, start + 14);
  const e = hex4(text, start + 19);
  const f = hex4(text, start + 24);
  const g = hex4(text, start + 28);
  const h = hex4(text, start + 32);
  if ((a | b | c | d | e | f | g | h) < 0) return false;
  out[at] = (a << 16) | b;
  out[at + 1] = (c << 16) | d;
  out[at + 2] = (e << 16) | f;
  out[at + 3] = (g << 16) | h;
  return true;
}

/** Whether `text` is exactly one lower-case UUID; if so its words are in `out` at `at`. */
export function parseWholeUuid(text: string, out: Uint32Array, at: number): boolean {
  return text.length === UUID_CHARS && parseUuid(text, 0, out, at);
}

/** Four lower-case hex digits' value, or a negative number. */
function hex4(text: string, at: number): number {
  const a = HEX_VALUE[text.charCodeAt(at) & 0xffff]!;
  const b = HEX_VALUE[text.charCodeAt(at + 1) & 0xffff]!;
  const c = HEX_VALUE[text.charCodeAt(at + 2) & 0xffff]!;
  const d = HEX_VALUE[text.charCodeAt(at + 3) & 0xffff]!;
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

/** Writes the UUID held in the four words at `at` as 36 characters at `o`. */
export function writeUuid(words: Uint32Array, at: number, out: Uint8Array, o: number): void {
  writeHex16(words[at]! >>> 16, out, o);
  writeHex16(words[at]! & 0xffff, out, o + 4);
  out[o + 8] = DASH;
  writeHex16(words[at + 1]! >>> 16, out, o + 9);
  out[o + 13] = DASH;
  writeHex16(words[at + 1]! & 0xffff, out, o + 14);
  out[o + 18] = DASH;
  writeHex16(words[at + 2]! >>> 16, out, o + 19);
  out[o + 23] = DASH;
  writeHex16(words[at + 2]! & 0xffff, out, o + 24);
  writeHex16(words[at + 3]! >>> 16, out, o + 28);
  writeHex16(words[at + 3]! & 0xffff, out, o + 32);
}

/** Writes a 16-bit value as 4 hex digits. */
function writeHex16(value: number, out: Uint8Array, o: number): void {
  writeHexByte(value >>> 8, out, o);
  writeHexByte(value & 0xff, out, o + 2);
}

function writeHexByte(byte: number, out: Uint8Array, o: number): void {
  out[o] = HEX_CHAR[byte >>> 4]!;
  out[o + 1] = HEX_CHAR[byte & 15]!;
}

/** A 32-bit hash of the four words at `at` (murmur3's finaliser over a simple combination). */
export function hashWords(words: Uint32Array, at: number): number {
  let h = Math.imul(words[at]! ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15) ^ words[at + 1]!, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 13) ^ words[at + 2]!, 0x85ebca6b);
  h ^= words[at + 3]!;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

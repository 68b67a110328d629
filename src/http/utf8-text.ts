// UTF-8 bytes as a string: a request body for JSON.parse, a long value of a protobuf message.
// `Buffer#toString('utf8')` (V8's `String::NewFromUtf8`) copies ASCII fast, but from the first other
// character on it decodes at ~6 ns a byte: a `€` early in a 180 KB OTLP/JSON request made decoding
// it cost as much as JSON.parse itself. ICU's converter (`buffer.transcode`) writes the same UTF-16
// at ~2 ns a byte wherever the other characters are, and a UTF-16LE buffer becomes a string by a
// copy (figures: bench/pipeline README, 2026-11-28). Invalid UTF-8 keeps `toString`'s meaning (each
// bad sequence replaced with U+FFFD): only text that `isUtf8` has validated is transcoded.

import { isAscii, isUtf8, transcode } from 'node:buffer';

/**
 * Bodies above this many bytes are decoded by `toString`: transcoding holds a UTF-16 copy (twice
 * the body's bytes) besides the string for a moment, which is nothing for a request of a few
 * hundred KB and too much for one of tens of MB.
 */
const TRANSCODE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Below this many bytes `toString` is as fast or faster: a call to ICU's converter costs ~2 µs by
 * itself, as much as V8 takes for ~1.5 KB that are not ASCII from their first byte.
 */
const TRANSCODE_MIN_BYTES = 2048;

type Slicing = Buffer & {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
  ucs2Slice(start: number, end: number): string;
};

/** Whether this Node.js has ICU's converters (`transcode` throws without them). */
const canTranscode = (() => {
  try {
    transcode(Buffer.from('€'), 'utf8', 'utf16le');
    return true;
  } catch {
    return false;
  }
})();

/**
 * The text of UTF-8 `bytes` (from `start` to `end`), as `Buffer#toString('utf8', start, end)`
 * returns it.
 */
export function utf8Text(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const buffer = (
    Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  ) as Slicing;
  const length = end - start;
  if (length < TRANSCODE_MIN_BYTES || length > TRANSCODE_MAX_BYTES || !canTranscode)
    return buffer.utf8Slice(start, end);
  const text = start === 0 && end === buffer.length ? buffer : (buffer.subarray(start, end) as Slicing);
  // ASCII is Latin-1 too: one byte per character, copied without decoding.
  if (isAscii(text)) return text.latin1Slice(0, length);
  if (!isUtf8(text)) return text.utf8Slice(0, length);
  const utf16 = transcode(text, 'utf8', 'utf16le') as Slicing;
  return utf16.ucs2Slice(0, utf16.length);
}

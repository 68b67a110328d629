// A bounds-checked reader of the protobuf wire format. Every read checks against the end of the
// enclosing message, so truncated or hostile input fails with an OtlpDecodeError (never reads past
// the buffer, never loops forever: each read advances at least one byte).

import { OtlpDecodeError } from './errors.ts';
import { utf8Text } from '../http/utf8-text.ts';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32', '6', '7'];
const TWO_32 = 4294967296;
const MAX_GROUP_DEPTH = 32;
/**
 * Strings shorter than this are decoded in JS when they are ASCII, which skips the native call's
 * overhead (~60 ns) but builds the string a character at a time: from 9 bytes on that costs more
 * than the call (12 bytes: ~107 against ~85 ns, 23: ~160 against ~71), and from 13 on it makes a
 * cons string that its first lookup as a key flattens again (23 bytes and a lookup: ~280 against
 * ~137 ns). Span and event names, model names and ids are mostly 10–23 bytes (6–7 a span on the
 * Vercel and span-event shapes).
 */
const SHORT_STRING = 9;

// Attribute keys repeat from span to span ("gen_ai.request.model" in every model call), so `key()`
// decodes each one once and finds it again by its bytes in a direct-mapped table: a string already
// decoded, flat, whose hash V8 has computed, where decoding made a new string every time — built a
// character at a time into a chain of cons strings that the first Map lookup had to flatten. Per
// key, decoding, a Map.set and two lookups went from ~210 to ~80 ns. ASCII keys only (the check
// compares char codes with bytes, which is exact only for ASCII); a key that finds no room replaces
// one, so hostile unique keys cost a decode each, as before, and the table never grows.
//
// Each key may sit in either of two slots, taken from different bits of its hash. With one slot,
// two keys of one workload that shared it evicted each other at every use: Traceloop's
// `gen_ai.request.max_tokens` and `traceloop.span.kind` did, a decode per span, and with a few
// hundred distinct keys (a proxy fed by several SDKs) a dozen such pairs are to be expected.
const KEY_TABLE_SIZE = 4096; // a power of two
// OpenInference's longest keys (`llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments`,
// 72 bytes) are in every model call that calls a tool: 64 left them out.
const KEY_MAX_BYTES = 128;
const keyTable: (string | undefined)[] = new Array<string | undefined>(KEY_TABLE_SIZE).fill(undefined);
// Spans of one kind carry their keys in the same order, so the key that followed the previous one
// last time is tried first: compared byte by byte in one pass, without hashing. The comparison is
// as exact as the table's (every key kept is ASCII), so a wrong guess only costs the comparison.
const followerSlot = new Uint16Array(KEY_TABLE_SIZE);
let previousSlot = 0;

// Buffer#toString(encoding, start, end) validates its arguments and dispatches on the encoding on
// every call; utf8Slice is the method it ends up in (replacing invalid sequences with U+FFFD, as
// TextDecoder does). Measured by bench/ingest/decode.ts: ~1.4x faster decoding of a span request.
type Utf8Sliceable = Buffer & { utf8Slice(start: number, end: number): string };
const utf8Slice = (buf: Buffer, start: number, end: number) => (buf as Utf8Sliceable).utf8Slice(start, end);

export class ProtoReader {
  pos = 0;
  readonly buf: Buffer;
  private readonly view: DataView;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** Reads a tag; returns `field << 3 | wireType` after checking the field number is valid. */
  tag(end: number): number {
    const tag = this.uint32(end);
    if (tag >>> 3 === 0) throw new OtlpDecodeError('invalid field number 0');
    return tag;
  }

  /** A varint truncated to its low 32 bits, as unsigned (uint32, enum and int32 fields). */
  uint32(end: number): number {
    const buf = this.buf;
    const pos = this.pos;
    // Most varints of a span request are one byte (every tag below field 16, the length of every
    // key and short value): those are read without the loop's arithmetic.
    if (pos < end) {
      const first = buf[pos]!;
      if (first < 0x80) {
        this.pos = pos + 1;
        return first;
      }
    }
    return this.longerUint32(end);
  }

  /**
   * `uint32` past its one-byte case, in a function of its own: that keeps the case nearly every call
   * takes (every tag and most lengths of a request) small for V8 to inline into its many callers,
   * 55 bytes of bytecode against 186 with the loop and its errors; `uint32` was 2.7 % of the
   * proxy's CPU profile on span events. Decoding alone −1 to −5 % per shape.
   */
  private longerUint32(end: number): number {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw new OtlpDecodeError('truncated varint');
      const byte = buf[this.pos++]!;
      if (shift < 32) result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return result % TWO_32;
    }
    throw new OtlpDecodeError('varint longer than 10 bytes');
  }

  /** A varint as a signed 32-bit value (int32 and enum fields may be negative). */
  int32(end: number): number {
    return this.uint32(end) | 0;
  }

  /** A varint as an unsigned 64-bit bigint. */
  varint64(end: number): bigint {
    const buf = this.buf;
    let low = 0;
    // 7 bytes carry 49 bits, which a double holds exactly: the common small values never touch bigint.
    for (let i = 0; i < 7; i++) {
      if (this.pos >= end) throw new OtlpDecodeError('truncated varint');
      const byte = buf[this.pos++]!;
      low += (byte & 0x7f) * 2 ** (7 * i);
      if (byte < 0x80) return BigInt(low);
    }
    let value = BigInt(low);
    for (let i = 7; i < 10; i++) {
      if (this.pos >= end) throw new OtlpDecodeError('truncated varint');
      const byte = buf[this.pos++]!;
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if (byte < 0x80) return BigInt.asUintN(64, value);
    }
    throw new OtlpDecodeError('varint longer than 10 bytes');
  }

  /** A varint as a bool: any set bit, in any of its bytes, is true. */
  bool(end: number): boolean {
    const buf = this.buf;
    let bits = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw new OtlpDecodeError('truncated varint');
      const byte = buf[this.pos++]!;
      bits |= byte & 0x7f;
      if (byte < 0x80) return bits !== 0;
    }
    throw new OtlpDecodeError('varint longer than 10 bytes');
  }

  fixed32(end: number): number {
    this.need(4, end);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  fixed64(end: number): bigint {
    this.need(8, end);
    const low = this.view.getUint32(this.pos, true);
    const high = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    // Nanosecond timestamps before 2255 fit in 53 bits: build them without bigint shifts.
    if (high < 0x200000) return BigInt(high * TWO_32 + low);
    return (BigInt(high) << 32n) | BigInt(low);
  }

  double(end: number): number {
    this.need(8, end);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** Reads a length prefix and returns the end offset of the field it announces. */
  lengthEnd(end: number): number {
    const length = this.uint32(end);
    if (length > end - this.pos)
      throw new OtlpDecodeError(`length ${length} overruns the message (${end - this.pos} bytes left)`);
    return this.pos + length;
  }

  string(end: number): string {
    const stop = this.lengthEnd(end);
    const start = this.pos;
    this.pos = stop;
    if (stop - start < SHORT_STRING) {
      // Most keys and short values are ASCII: building them here skips the native call's overhead.
      const buf = this.buf;
      let text = '';
      for (let i = start; i < stop; i++) {
        const byte = buf[i]!;
        if (byte >= 0x80) return utf8Slice(buf, start, stop);
        text += String.fromCharCode(byte);
      }
      return text;
    }
    // A long value that is not ASCII (a prompt, a document in another language) decodes 2-3x
    // faster through ICU's converter than through V8's (src/http/utf8-text.ts).
    return utf8Text(this.buf, start, stop);
  }

  /** A string that is probably seen again, such as an attribute key (see `keyTable`). */
  key(end: number): string {
    const stop = this.lengthEnd(end);
    const start = this.pos;
    this.pos = stop;
    const length = stop - start;
    if (length > KEY_MAX_BYTES) return utf8Slice(this.buf, start, stop);
    const buf = this.buf;
    const guessSlot = followerSlot[previousSlot]!;
    const guess = keyTable[guessSlot];
    if (guess !== undefined && sameAscii(guess, buf, start, length)) {
      previousSlot = guessSlot;
      return guess;
    }
    let hash = 0x811c9dc5; // FNV-1a
    for (let i = start; i < stop; i++) {
      const byte = buf[i]!;
      if (byte >= 0x80) return utf8Slice(buf, start, stop);
      hash = Math.imul(hash ^ byte, 0x01000193);
    }
    const slot = hash & (KEY_TABLE_SIZE - 1);
    const alternative = (hash >>> 16) & (KEY_TABLE_SIZE - 1);
    const known = keyTable[slot];
    if (known !== undefined && sameAscii(known, buf, start, length)) return this.found(slot, known);
    const other = keyTable[alternative];
    if (other !== undefined && sameAscii(other, buf, start, length)) return this.found(alternative, other);
    const key = utf8Slice(buf, start, stop);
    const free = known === undefined || other !== undefined ? slot : alternative;
    keyTable[free] = key;
    return this.found(free, key);
  }

  /** Records `slot` as the one that followed the previous key's, and returns its key. */
  private found(slot: number, key: string): string {
    followerSlot[previousSlot] = slot;
    previousSlot = slot;
    return key;
  }

  /** A view (not a copy) of a bytes field; copy it before keeping it beyond the request. */
  bytesView(end: number): Uint8Array {
    const stop = this.lengthEnd(end);
    const view = this.buf.subarray(this.pos, stop);
    this.pos = stop;
    return view;
  }

  /** Skips a field of an unknown number, as proto3 requires. */
  skip(wireType: number, end: number, depth = 0): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.uint32(end);
        return;
      case WIRE_FIXED64:
        this.need(8, end);
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.pos = this.lengthEnd(end);
        return;
      case WIRE_FIXED32:
        this.need(4, end);
        this.pos += 4;
        return;
      case WIRE_START_GROUP: {
        if (depth >= MAX_GROUP_DEPTH) throw new OtlpDecodeError('groups nested too deeply');
        for (;;) {
          const tag = this.tag(end);
          if ((tag & 7) === WIRE_END_GROUP) return;
          this.skip(tag & 7, end, depth + 1);
        }
      }
      default:
        throw new OtlpDecodeError(`unexpected wire type ${WIRE_NAMES[wireType]}`);
    }
  }

  /** Fails when a known field arrives with another wire type than its declaration. */
  expect(tag: number, wireType: number, field: string): void {
    if ((tag & 7) !== wireType) {
      throw new OtlpDecodeError(`${field}: wire type ${WIRE_NAMES[tag & 7]}, expected ${WIRE_NAMES[wireType]}`);
    }
  }

  private need(bytes: number, end: number): void {
    if (end - this.pos < bytes) throw new OtlpDecodeError(`truncated: ${bytes} bytes needed, ${end - this.pos} left`);
  }
}

/** Whether `text`, a key of the table (ASCII), is the `length` bytes of `buf` at `start`. */
function sameAscii(text: string, buf: Buffer, start: number, length: number): boolean {
  if (text.length !== length) return false;
  for (let i = 0; i < length; i++) if (text.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

// The framing of one journal record, and of the file that holds them.
//
// A segment file starts with the 4-byte magic `TPJ1`, then records back to back:
//
//   u32 LE  payload length
//   u32 LE  CRC-32 of the payload
//   payload: u32 LE header length, the header (JSON), the body (opaque bytes)
//
// The checksum covers the whole payload, so a record torn by a crash in the middle of a write, or
// damaged on disk, is recognised as such on replay instead of being decoded into garbage.

import { crc32 } from 'node:zlib';

export const SEGMENT_MAGIC = Buffer.from('TPJ1');
/** Bytes before the payload: its length and its checksum. */
export const RECORD_PREFIX_BYTES = 8;

/** The buffers of one record, ready for a gathered write; `bytes` is their total length. */
export interface EncodedRecord {
  readonly buffers: Buffer[];
  readonly bytes: number;
}

export function encodeRecord(header: unknown, body: Buffer): EncodedRecord {
  const headerJson = Buffer.from(JSON.stringify(header));
  const headerLength = Buffer.allocUnsafe(4);
  headerLength.writeUInt32LE(headerJson.length, 0);
  const payloadLength = 4 + headerJson.length + body.length;
  let checksum = crc32(headerLength);
  checksum = crc32(headerJson, checksum);
  checksum = crc32(body, checksum);
  const prefix = Buffer.allocUnsafe(RECORD_PREFIX_BYTES);
  prefix.writeUInt32LE(payloadLength, 0);
  prefix.writeUInt32LE(checksum, 4);
  return { buffers: [prefix, headerLength, headerJson, body], bytes: RECORD_PREFIX_BYTES + payloadLength };
}

/** Reads a record's prefix: the payload length and checksum. */
export function readPrefix(prefix: Buffer): { payloadLength: number; checksum: number } {
  return { payloadLength: prefix.readUInt32LE(0), checksum: prefix.readUInt32LE(4) };
}

/** A payload that does not match its checksum or does not parse. */
export class CorruptRecordError extends Error {
  override readonly name = 'CorruptRecordError';
}

/** Checks and splits a payload read back from disk. */
export function decodePayload<H>(payload: Buffer, checksum: number): { header: H; body: Buffer } {
  if (crc32(payload) !== checksum) throw new CorruptRecordError('checksum mismatch');
  if (payload.length < 4) throw new CorruptRecordError('payload shorter than its header length');
  const headerLength = payload.readUInt32LE(0);
  if (4 + headerLength > payload.length) throw new CorruptRecordError('header length beyond the payload');
  let header: H;
  try {
    header = JSON.parse(payload.subarray(4, 4 + headerLength).toString('utf8')) as H;
  } catch {
    throw new CorruptRecordError('header is not JSON');
  }
  return { header, body: payload.subarray(4 + headerLength) };
}

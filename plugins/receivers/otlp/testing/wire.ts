// Protobuf wire reading and writing for the receiver's tests, on protobufjs's Reader and Writer:
// a message's fields by number (to check an answer without a schema), and hand-built messages
// (to send the decoder what no encoder would write: a wrong wire type, a deep nesting).

import protobuf from 'protobufjs/minimal.js';

const WIRE_VARINT = 0;
const WIRE_LENGTH_DELIMITED = 2;

/** A message's varint fields (as bigint) and length-delimited ones (as bytes), by field number; the last wins. */
export function fields(bytes: Uint8Array): Map<number, Uint8Array | bigint> {
  const reader = protobuf.Reader.create(bytes);
  const out = new Map<number, Uint8Array | bigint>();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const wire = tag & 7;
    if (wire === WIRE_VARINT) out.set(tag >>> 3, BigInt(String(reader.uint64())));
    else if (wire === WIRE_LENGTH_DELIMITED) out.set(tag >>> 3, reader.bytes());
    else reader.skipType(wire);
  }
  return out;
}

/** A message written field by field: `new ProtoWriter().tag(1, 2).bytes(inner).finish()`. */
export class ProtoWriter {
  private readonly writer = protobuf.Writer.create();

  /** The key of field `field` with wire type `wire`. */
  tag(field: number, wire: number): this {
    this.writer.uint32((field << 3) | wire);
    return this;
  }

  bytes(value: Uint8Array): this {
    this.writer.bytes(value);
    return this;
  }

  string(value: string): this {
    this.writer.string(value);
    return this;
  }

  varint32(value: number): this {
    this.writer.uint32(value);
    return this;
  }

  fixed64(value: bigint): this {
    this.writer.fixed64(protobuf.util.LongBits.from(String(value)).toLong());
    return this;
  }

  fixed32(value: number): this {
    this.writer.fixed32(value);
    return this;
  }

  finish(): Uint8Array {
    return this.writer.finish();
  }
}

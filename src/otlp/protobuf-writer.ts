// A growable protobuf wire-format writer. Length-delimited fields reserve one byte for their length
// and shift the body only when it turns out to need more (bodies under 128 bytes — most attributes
// — never move).

const TWO_32 = 4294967296;

export class ProtoWriter {
  private buf: Buffer;
  private pos = 0;
  private readonly starts: number[] = [];

  constructor(initialSize = 4096) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** The bytes written so far (a copy, so the writer's buffer can be dropped). */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos));
  }

  tag(field: number, wireType: number): this {
    return this.varint32((field << 3) | wireType);
  }

  varint32(value: number): this {
    this.ensure(5);
    let v = value >>> 0;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
    return this;
  }

  /** A varint of a signed 32-bit value (negative int32/enum values take 10 bytes, as protobuf says). */
  int32(value: number): this {
    return value < 0 ? this.varint64(BigInt(value)) : this.varint32(value);
  }

  /** A varint of a 64-bit value; negative values are written in two's complement. */
  varint64(value: bigint): this {
    this.ensure(10);
    let v = BigInt.asUintN(64, value);
    if (v < 0x100000000n) return this.varint32(Number(v));
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
    return this;
  }

  fixed32(value: number): this {
    this.ensure(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  fixed64(value: bigint): this {
    this.ensure(8);
    const v = BigInt.asUintN(64, value);
    if (v <= BigInt(Number.MAX_SAFE_INTEGER)) {
      const n = Number(v);
      this.buf.writeUInt32LE(n % TWO_32, this.pos);
      this.buf.writeUInt32LE(Math.floor(n / TWO_32), this.pos + 4);
    } else {
      this.buf.writeUInt32LE(Number(v & 0xffffffffn), this.pos);
      this.buf.writeUInt32LE(Number(v >> 32n), this.pos + 4);
    }
    this.pos += 8;
    return this;
  }

  double(value: number): this {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
    return this;
  }

  bytes(value: Uint8Array): this {
    this.varint32(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
    return this;
  }

  string(value: string): this {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; short strings need no exact length first.
    const maxBytes = value.length * 3;
    if (maxBytes < 128) {
      this.ensure(1 + maxBytes);
      const written = this.buf.write(value, this.pos + 1, 'utf8');
      this.buf[this.pos] = written;
      this.pos += 1 + written;
      return this;
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.varint32(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
    return this;
  }

  /** Starts a length-delimited field; close it with `ldelim()`. */
  fork(field: number): this {
    this.tag(field, 2);
    this.ensure(1);
    this.starts.push(this.pos);
    this.pos += 1;
    return this;
  }

  ldelim(): this {
    const start = this.starts.pop()!;
    const length = this.pos - start - 1;
    if (length < 128) {
      this.buf[start] = length;
      return this;
    }
    let size = 1;
    for (let v = length >>> 7; v > 0; v >>>= 7) size++;
    this.ensure(size - 1);
    this.buf.copyWithin(start + size, start + 1, this.pos);
    let v = length;
    let at = start;
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
    this.pos += size - 1;
    return this;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

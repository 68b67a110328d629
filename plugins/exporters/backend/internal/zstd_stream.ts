// A synchronous streaming zstd compressor over zstd-napi's native context: bytes go in as they are
// produced and only the compressed output is kept, so a batch is never held twice uncompressed.
// Also the decompression of stored batches (decompressZstd, at the end).
// zstd-napi was chosen by measurement: native, several times faster than pure-JS implementations
// (bench/pipeline/encode.ts measures the encoder).
//
// Three things keep it fast (bench/pipeline/encode.ts): compression contexts are pooled per level —
// a fresh context per batch spends more time initialising its tables than compressing 100 runs —,
// small writes are staged into one buffer of STAGE_BYTES before each native call, and the staging
// and output buffers are pooled too: allocated per batch they were 192 KiB of native memory per
// 100 runs for the garbage collector to reclaim (with them pooled, encode.ts went from 98,000 –
// 138,000 to 184,000 – 193,000 runs/s at level 3, together with writeString below).

import { createRequire } from 'node:module';
import type * as ZstdBinding from 'zstd-napi/binding.js';

// The binding is CommonJS with enums; loading it through require keeps its runtime values typed.
const binding = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding;
const OUT_SIZE = binding.cStreamOutSize();
const STAGE_BYTES = 64 * 1024;
// Decimal digits of the longest length writeWithLength states (a stage holds less than 10^5 bytes).
const MAX_LENGTH_DIGITS = 5;
const POOL_LIMIT = 16;

const pools = new Map<number, ZstdBinding.CCtx[]>();

/**
 * Match-finder tables smaller than zstd's own at the default level, whose 2^17 hash and 2^16
 * chain entries (768 KiB) are sized for inputs of unknown, possibly large size: an upload body is
 * some 250 KB of multipart per 100 runs, and tables that big mostly miss the processor's caches.
 * With 2^14 entries each (128 KiB) the writer took 14–27 % less CPU per run on the ten shapes of
 * bench/pipeline and no body came out larger; text with little redundancy loses some ratio
 * (bench/pipeline/zstd-tables.ts, README "2026-11-27, 18:10–19:10"). Other levels keep zstd's
 * tables: only this one was measured.
 */
const TABLE_LOGS = new Map([[3, { hashLog: 14, chainLog: 14 }]]);

function acquireContext(level: number): ZstdBinding.CCtx {
  const pooled = pools.get(level)?.pop();
  if (pooled) return pooled;
  const context = new binding.CCtx();
  context.setParameter(binding.CParameter.compressionLevel, level);
  const tables = TABLE_LOGS.get(level);
  if (tables) {
    context.setParameter(binding.CParameter.hashLog, tables.hashLog);
    context.setParameter(binding.CParameter.chainLog, tables.chainLog);
  }
  return context;
}

function releaseContext(level: number, context: ZstdBinding.CCtx): void {
  const pool = pools.get(level) ?? [];
  pools.set(level, pool);
  if (pool.length < POOL_LIMIT) pool.push(context);
}

/** The output and staging buffers one compressor uses while it is open. */
interface Buffers {
  readonly out: Buffer;
  readonly stage: Buffer;
}

const bufferPool: Buffers[] = [];

function acquireBuffers(): Buffers {
  return bufferPool.pop() ?? { out: Buffer.allocUnsafe(OUT_SIZE), stage: Buffer.allocUnsafe(STAGE_BYTES) };
}

function releaseBuffers(buffers: Buffers): void {
  if (bufferPool.length < POOL_LIMIT) bufferPool.push(buffers);
}

export class ZstdStreamCompressor {
  private context?: ZstdBinding.CCtx;
  private readonly chunks: Buffer[] = [];
  // Taken from the pool while open and given back by finish(); a finished compressor never touches
  // them again, so the next one may reuse them.
  private out: Buffer;
  private stage: Buffer;
  private staged = 0;
  private compressedBytes = 0;
  private rawBytes = 0;

  constructor(private readonly level: number) {
    this.context = acquireContext(level);
    ({ out: this.out, stage: this.stage } = acquireBuffers());
  }

  /** Uncompressed bytes written so far. */
  get raw(): number {
    return this.rawBytes;
  }

  write(data: Uint8Array): void {
    if (!this.context) throw new Error('the compressor is finished');
    this.rawBytes += data.byteLength;
    if (this.staged + data.byteLength <= STAGE_BYTES) {
      this.stage.set(data, this.staged);
      this.staged += data.byteLength;
      return;
    }
    this.flushStage();
    if (data.byteLength >= STAGE_BYTES) this.run(data, binding.EndDirective.continue);
    else {
      this.stage.set(data, 0);
      this.staged = data.byteLength;
    }
  }

  /**
   * Writes `text` as UTF-8 straight into the staging buffer; `bytes` is its UTF-8 length
   * (`Buffer.byteLength(text)`), which the caller has computed already. Part heads and run JSON go
   * through here: a `Buffer.from()` per piece (six per run) cost about 0.7 µs per run, and its
   * garbage, before it was copied into the stage anyway (bench/pipeline/stages.ts).
   */
  writeString(text: string, bytes: number): void {
    if (!this.context) throw new Error('the compressor is finished');
    if (this.staged + bytes > STAGE_BYTES) {
      this.flushStage();
      if (bytes >= STAGE_BYTES) {
        this.rawBytes += bytes;
        this.run(Buffer.from(text), binding.EndDirective.continue);
        return;
      }
    }
    this.rawBytes += bytes;
    this.staged += this.stage.write(text, this.staged);
  }

  /**
   * Writes `prefix`, the UTF-8 length of the `body` pieces together in decimal, `infix`, the
   * pieces one after another, then `suffix` (all ASCII but the pieces): a part head that states
   * the length of the body after it, the body, and what closes it. The length is what encoding the
   * pieces returns, not a `Buffer.byteLength` pass over them beforehand, which on text with
   * non-ASCII characters walks it as slowly as encoding does: the encode stage of
   * bench/pipeline/stages.ts went from 17.3 to 16.7 µs per span (realistic payload, median of
   * three alternated runs). A body given in pieces is written as it is, where one string joined
   * from them (`a + b`) would be copied whole into a flat string first. The pieces are encoded into
   * the stage behind room for the longest head, then the head is written in front of them and the
   * body moved down against the head (a memmove).
   */
  writeWithLength(prefix: string, infix: string, body: readonly string[], suffix: string): void {
    if (!this.context) throw new Error('the compressor is finished');
    const room = prefix.length + MAX_LENGTH_DIGITS + infix.length;
    let bound = room + suffix.length;
    for (const piece of body) bound += piece.length * 3; // UTF-8 takes at most 3 bytes per UTF-16 unit
    if (this.staged + bound > STAGE_BYTES) {
      this.flushStage();
      if (bound > STAGE_BYTES) {
        const lengths = body.map((piece) => Buffer.byteLength(piece));
        const head = prefix + lengths.reduce((sum, length) => sum + length, 0) + infix;
        this.writeString(head, head.length);
        body.forEach((piece, i) => this.writeString(piece, lengths[i]!));
        this.writeString(suffix, suffix.length);
        return;
      }
    }
    const stage = this.stage;
    const start = this.staged;
    let end = start + room;
    for (const piece of body) end += stage.write(piece, end);
    const bytes = end - start - room;
    const head = prefix + bytes + infix;
    // 'ascii' is the one encoding besides UTF-8 that Buffer#write hands to its native writer
    // without looking the encoding up.
    stage.write(head, start, 'ascii');
    stage.copyWithin(start + head.length, start + room, end);
    // The suffix (a CRLF) is stored byte by byte rather than through one more native call.
    let at = start + head.length + bytes;
    for (let i = 0; i < suffix.length; i++) stage[at++] = suffix.charCodeAt(i);
    this.rawBytes += at - start;
    this.staged = at;
  }

  /** Ends the frame and returns the whole compressed body. */
  finish(): Buffer {
    const context = this.context;
    if (context) {
      this.flushStage();
      this.run(Buffer.alloc(0), binding.EndDirective.end);
      this.context = undefined;
      releaseContext(this.level, context); // The frame is complete: the context is clean.
      releaseBuffers({ out: this.out, stage: this.stage });
    }
    return Buffer.concat(this.chunks, this.compressedBytes);
  }

  private flushStage(): void {
    if (this.staged === 0) return;
    this.run(this.stage.subarray(0, this.staged), binding.EndDirective.continue);
    this.staged = 0;
  }

  private run(input: Uint8Array, directive: ZstdBinding.EndDirective): void {
    const flushing = directive !== binding.EndDirective.continue;
    let rest = input;
    for (;;) {
      const [remaining, produced, consumed] = this.context!.compressStream2(this.out, rest, directive);
      if (produced > 0) {
        // Copy out what was produced and keep the (large) output buffer for the next call.
        this.chunks.push(Buffer.from(this.out.subarray(0, produced)));
        this.compressedBytes += produced;
      }
      rest = rest.subarray(consumed);
      if (rest.byteLength === 0 && (!flushing || remaining === 0)) return;
    }
  }
}

const D_OUT_SIZE = binding.dStreamOutSize();
let decompressionContext: ZstdBinding.DCtx | undefined;

/**
 * Decompresses a whole zstd body (one or more frames), such as a stored batch re-read for its runs.
 *
 * zstd-napi's `decompress()` shares one context per process and does not reset it after an error:
 * a corrupt or truncated batch left it in the middle of a frame, and every later call failed with
 * "Operation not authorized at current processing stage" — and a truncated frame was returned
 * short without any error. Here the shared context is reset after every use, failed or not, and a
 * body that ends inside a frame is an error (zstd_stream.test.ts). The context is shared rather
 * than made per call because its native memory is invisible to the garbage collector.
 */
export function decompressZstd(data: Uint8Array): Buffer {
  if (data.byteLength === 0) return Buffer.alloc(0);
  const context = (decompressionContext ??= new binding.DCtx());
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    let rest = data;
    for (;;) {
      // With the whole input at hand, an output buffer as large as the input saves native calls.
      const out = Buffer.allocUnsafe(Math.max(D_OUT_SIZE, rest.byteLength));
      const [remaining, produced, consumed] = context.decompressStream(out, rest);
      rest = rest.subarray(consumed);
      if (produced > 0) {
        chunks.push(out.subarray(0, produced));
        total += produced;
      }
      // Done once the input is consumed and nothing is left to flush: the buffer was not filled, or
      // a frame just ended (a further call would read the next frame's header and ask for input).
      if (rest.byteLength === 0 && (produced < out.length || remaining === 0)) {
        if (remaining !== 0) throw new Error('zstd data ends in the middle of a frame');
        return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      }
    }
  } finally {
    // Ends any frame in progress, so an error cannot reach the next call.
    context.reset(binding.ResetDirective.sessionOnly);
  }
}

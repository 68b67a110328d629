// Reads a request body into memory, decompressing it on the way (the Content-Encodings HTTP receivers
// take: identity, gzip, deflate, zstd), and stops as soon as either the
// bytes sent or the bytes they decompress to exceed the limit — so that a small compressed "bomb"
// costs megabytes of memory, never its full decompressed size, nor even `maxBytes`.
//
// Three things bound the memory of one request (measured in plugins/receivers/otlp/README.md,
// "Compressed bodies"):
//
// - Bounded steps. Every decompressor produces at most STEP_BYTES per step and the limit is checked
//   after each step. zstd-napi's `DecompressStream` cannot do this: its `_transform` inflates a
//   whole input chunk before it returns, so one 32 KB chunk of a zstd bomb became 1 GiB of buffers
//   before the limit was ever checked. Its low-level `DCtx.decompressStream` writes into an output
//   buffer we choose, so the zstd loop below drives it with one fixed STEP_BYTES buffer. For gzip
//   and deflate, Node's zlib streams already stop when their reader applies back-pressure, and
//   `chunkSize` bounds each step.
// - Two passes for large bodies. The decompressed bytes are kept only up to KEEP_BYTES; a body that
//   grows past that is inflated once to count its size (discarding the output) and, if it is within
//   the limit, a second time straight into one buffer of that exact size. So a bomb costs at most
//   KEEP_BYTES of output however high `max_body_bytes` is (the default is 200 MiB), while a valid
//   large body still arrives whole. Only bodies above KEEP_BYTES pay the second inflation.
// - One call for small bodies. A gzip or deflate body of at most ONE_SHOT_SENT_BYTES compressed is
//   read whole and inflated in one synchronous call whose output stops at ONE_SHOT_BYTES: a stream
//   inflates on libuv's thread pool, one step and one event-loop turn at a time, which cost 3× the
//   inflation itself on a typical OTLP request (measured: plugins/receivers/otlp/README.md). Being
//   synchronous, one such call is in progress at a time in the process, so a bomb among small
//   bodies costs at most ONE_SHOT_BYTES (twice, while zlib joins its pieces), and its size is
//   reported to `onGrow` once, after the call. A body that passes either bound is inflated in steps.
// - The zstd window. zstd's decoder accepts frames that ask for a window of up to 128 MiB, which it
//   allocates and fills; HTTP's `zstd` content coding caps it at 8 MiB (RFC 9659), and so does
//   WINDOW_LOG_MAX. Larger windows are refused as a coding error (400).

import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createInflate, gunzipSync, inflateSync } from 'node:zlib';
import type * as ZstdBinding from 'zstd-napi/binding.js';

// The binding is CommonJS with enums; loading it through require keeps its runtime values typed
// (as plugins/exporters/backend/internal/zstd_stream.ts does).
const zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding;

/** Largest output of one decompression step; the limit is checked after every step. */
const STEP_BYTES = 64 * 1024;
/** Decompressed bytes kept in memory during the first pass; beyond, the body is inflated twice. */
export const KEEP_BYTES = 8 * 1024 * 1024;
/** gzip and deflate bodies of at most this many bytes as sent are inflated in one call (if its output fits ONE_SHOT_BYTES). */
const ONE_SHOT_SENT_BYTES = 1024 * 1024;
/** Largest output of a one-call inflation; a body larger than this is inflated again, in steps. */
const ONE_SHOT_BYTES = 4 * 1024 * 1024;
/** 2^23 = 8 MiB, the largest zstd window HTTP's content coding allows. */
const WINDOW_LOG_MAX = 23;
/** The zstd loop runs synchronously; it lets other requests in every this many steps (4 MiB). */
const STEPS_PER_TURN = 64;
/** zstd decoders kept for reuse (see acquireDecoder). */
const DECODER_POOL_LIMIT = 8;

export type BodyCoding = 'identity' | 'gzip' | 'deflate' | 'zstd';

const CODINGS: Record<string, BodyCoding> = {
  identity: 'identity',
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  zstd: 'zstd',
};

export const SUPPORTED_CODINGS: readonly BodyCoding[] = ['identity', 'gzip', 'deflate', 'zstd'];

/**
 * The coding named by a Content-Encoding header; undefined when it is unsupported. Stacked codings
 * (`gzip, zstd`) are unsupported: no exporter or SDK sends them.
 */
export function codingOf(header: string | undefined): BodyCoding | undefined {
  if (header === undefined) return 'identity';
  const name = header.trim().toLowerCase();
  if (name === '') return 'identity';
  return Object.hasOwn(CODINGS, name) ? CODINGS[name] : undefined;
}

/** The body, as sent or decompressed, is larger than the limit. Answered with 413. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  constructor(
    readonly limit: number,
    readonly decompressed: boolean,
  ) {
    super(
      decompressed
        ? `request body decompresses to more than the ${limit}-byte limit`
        : `request body exceeds the ${limit}-byte limit`,
    );
  }
}

/** The body is not a valid stream of its Content-Encoding. Answered with 400. */
export class BodyCodingError extends Error {
  override readonly name = 'BodyCodingError';
}

/** The client stopped sending before the body was complete; there is nobody left to answer. */
export class BodyAbortedError extends Error {
  override readonly name = 'BodyAbortedError';
}

type Compressed = Exclude<BodyCoding, 'identity'>;

/**
 * Receives each step's output. Unless `owned`, `chunk` is overwritten by the next step, so what is
 * kept must be copied; zlib's chunks are fresh buffers, kept as they are.
 */
type Sink = (chunk: Buffer, owned: boolean) => void;

export interface ReadBodyOptions {
  /**
   * Called with the body's size so far — decompressed, as it grows — after every chunk or
   * decompression step, before more is read or inflated. It may throw to stop reading at once (a
   * caller that reserves memory for the body refuses it here, long before a bomb is inflated);
   * `readBody` then rejects with that same error. A small gzip or deflate body, inflated in one
   * call of at most 4 MiB of output, is reported once, with its whole size, after that call.
   */
  readonly onGrow?: (bytes: number) => void;
  /**
   * Where a body that arrived in more than one chunk is assembled, without compression (default: a
   * new buffer). A receiver can hand out a buffer it reuses once the request is done with: under
   * the container image's `MALLOC_MMAP_THRESHOLD_`, a new buffer of 64 KiB or more is a fresh
   * mapping whose pages fault in one by one (see plugins/receivers/otlp/internal/body-buffers.ts).
   * It must return a buffer of exactly `bytes` bytes.
   */
  readonly allocate?: (bytes: number) => Buffer;
}

export async function readBody(
  source: Readable,
  coding: BodyCoding,
  maxBytes: number,
  options: ReadBodyOptions = {},
): Promise<Buffer> {
  const { onGrow } = options;
  // An error of the caller's own, thrown by onGrow: passed through unclassified.
  let refusal: { error: unknown } | undefined;
  const grown = (bytes: number) => {
    try {
      onGrow?.(bytes);
    } catch (error) {
      refusal = { error };
      throw error;
    }
  };
  if (coding === 'identity') return readPlain(source, maxBytes, grown, options.allocate);

  // The compressed bytes are kept (they are at most `maxBytes`) only when a second pass may be
  // needed, that is when the limit lets a body grow past KEEP_BYTES.
  const sentChunks: Buffer[] | undefined = maxBytes > KEEP_BYTES ? [] : undefined;
  let sent = 0;
  let sourceFailed = false;
  // The request stream is iterated without destroying it on error, so the socket stays open for
  // the 413/400 answer.
  async function* counted(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        sent += chunk.length;
        if (sent > maxBytes) throw new BodyTooLargeError(maxBytes, false);
        sentChunks?.push(chunk);
        yield chunk;
      }
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) sourceFailed = true;
      throw error;
    }
  }

  let size = 0;
  let kept: Buffer[] | undefined = [];
  try {
    let input: AsyncIterable<Buffer> | Iterable<Buffer> = counted();
    if (coding !== 'zstd') {
      const head = await readUpTo(input, ONE_SHOT_SENT_BYTES);
      if (head.rest === undefined) {
        const whole = inflateWhole(coding, head.chunks, Math.min(maxBytes, ONE_SHOT_BYTES));
        if (whole !== undefined) {
          grown(whole.length);
          return whole;
        }
        // Larger than one call inflates: inflated in steps below, which count it exactly.
      }
      input = head.rest === undefined ? head.chunks : prepend(head.chunks, head.rest);
    }
    await inflate(coding, input, (chunk, owned) => {
      size += chunk.length;
      if (size > maxBytes) throw new BodyTooLargeError(maxBytes, true);
      grown(size);
      if (!kept) return;
      if (size <= KEEP_BYTES) kept.push(owned ? chunk : Buffer.from(chunk));
      else kept = undefined; // Too large to keep twice: count on, and inflate again below.
    });
    if (kept) {
      // A single chunk is returned as is only when it fills its memory: zlib's chunks are views of
      // STEP_BYTES buffers, which a small body should not pin.
      const only = kept.length === 1 ? kept[0]! : undefined;
      return only && only.byteLength === only.buffer.byteLength ? only : Buffer.concat(kept, size);
    }

    const body = Buffer.allocUnsafe(size);
    let written = 0;
    await inflate(coding, sentChunks!, (chunk) => {
      if (written + chunk.length > size) throw new Error('the second inflation produced more bytes than the first');
      written += chunk.copy(body, written);
    });
    if (written !== size) throw new Error('the second inflation produced fewer bytes than the first');
    return body;
  } catch (error) {
    if (refusal) throw refusal.error;
    const classified = classify(error, sourceFailed);
    if (classified instanceof BodyCodingError) classified.message = `invalid ${coding} stream: ${classified.message}`;
    throw classified;
  }
}

/** The first chunks of `input`, at least `bytes` of them unless it ends first, and the rest if it did not. */
async function readUpTo(
  input: AsyncIterable<Buffer>,
  bytes: number,
): Promise<{ chunks: Buffer[]; rest?: AsyncIterator<Buffer> }> {
  const iterator = input[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  for (let size = 0; size <= bytes;) {
    const next = await iterator.next();
    if (next.done) return { chunks };
    chunks.push(next.value);
    size += next.value.length;
  }
  return { chunks, rest: iterator };
}

async function* prepend(head: Buffer[], rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  yield* { [Symbol.asyncIterator]: () => rest };
}

/**
 * A whole gzip or deflate body inflated in one call, or undefined when its output would pass
 * `limit` (or gzip's trailer says it would: inflating it in steps then counts it exactly).
 */
function inflateWhole(coding: 'gzip' | 'deflate', chunks: Buffer[], limit: number): Buffer | undefined {
  const sent = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const hint = gzipSizeHint(coding, sent);
  if (hint !== undefined && hint > limit) return undefined;
  // Output sized by gzip's trailer comes back as one buffer, which zlib need not join from pieces
  // (1.1 against 1.5 µs a span on a 128 KB OTLP request); one byte more spares zlib a last, empty
  // piece to learn that the stream has ended. A wrong trailer costs pieces (and a coding error).
  // 64 bytes is the least zlib takes.
  const chunkSize = hint === undefined ? STEP_BYTES : Math.min(Math.max(hint + 1, 64), limit + 1);
  const options = { chunkSize, maxOutputLength: limit };
  let body: Buffer;
  try {
    body = coding === 'gzip' ? gunzipSync(sent, options) : inflateSync(sent, options);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    throw error;
  }
  // A short body in a long piece (a small deflate body in STEP_BYTES) would pin the rest: copy it.
  // (Pieces of Buffer's shared pool are left as they are: a copy would be one too.)
  return body.buffer.byteLength > Math.max(2 * body.byteLength, Buffer.poolSize) ? Buffer.from(body) : body;
}

/** What gzip's trailer (ISIZE) says the body inflates to: a hint, as the sender wrote it, mod 2^32. */
function gzipSizeHint(coding: 'gzip' | 'deflate', sent: Buffer): number | undefined {
  // 18 bytes: the smallest gzip member (a 10-byte header, an empty block, the 8-byte trailer).
  return coding === 'gzip' && sent.length >= 18 ? sent.readUInt32LE(sent.length - 4) : undefined;
}

function inflate(coding: Compressed, input: AsyncIterable<Buffer> | Iterable<Buffer>, sink: Sink): Promise<void> {
  return coding === 'zstd' ? inflateZstd(input, sink) : inflateZlib(coding, input, sink);
}

async function inflateZlib(
  coding: 'gzip' | 'deflate',
  input: AsyncIterable<Buffer> | Iterable<Buffer>,
  sink: Sink,
): Promise<void> {
  // Node's zlib stream writes at most `chunkSize` bytes per native call and, when its reader is
  // behind, waits for the next read before inflating more of the same input chunk, so a bomb is
  // inflated one step at a time as the loop below pulls (measured: plugins/receivers/otlp/README.md). HTTP's `deflate`
  // is the zlib format (RFC 9110 §8.4.1.2), which is what OTLP exporters send.
  const options = { chunkSize: STEP_BYTES };
  const inflater = coding === 'gzip' ? createGunzip(options) : createInflate(options);
  await pipeline(input, inflater, async (inflated: AsyncIterable<Buffer>) => {
    for await (const chunk of inflated) sink(chunk, true);
  });
}

interface ZstdDecoder {
  readonly context: ZstdBinding.DCtx;
  readonly out: Buffer;
}

// zstd decoders are pooled rather than made per request: a DCtx holds its window (up to 8 MiB)
// and tables in native memory that the garbage collector does not see, so decoders dropped per
// request piled up to gigabytes between collections when measured, and were several times slower
// (a fresh window is page-faulted in every time). A pooled decoder is reset after every use —
// success, error or abandon — so a corrupt or truncated frame never reaches the next request.
const idleDecoders: ZstdDecoder[] = [];

function acquireDecoder(): ZstdDecoder {
  const idle = idleDecoders.pop();
  if (idle) return idle;
  const context = new zstd.DCtx();
  context.setParameter(zstd.DParameter.windowLogMax, WINDOW_LOG_MAX);
  return { context, out: Buffer.allocUnsafe(STEP_BYTES) };
}

function releaseDecoder(decoder: ZstdDecoder): void {
  try {
    // Ends any frame in progress; keeps the parameters (windowLogMax).
    decoder.context.reset(zstd.ResetDirective.sessionOnly);
  } catch {
    return; // Not reusable: leave it to the garbage collector.
  }
  if (idleDecoders.length < DECODER_POOL_LIMIT) idleDecoders.push(decoder);
}

async function inflateZstd(input: AsyncIterable<Buffer> | Iterable<Buffer>, sink: Sink): Promise<void> {
  const decoder = acquireDecoder();
  const { context, out } = decoder;
  try {
    let inFrame = false;
    let steps = 0;
    for await (const chunk of input) {
      // An empty step would start reading a frame header, and look like a frame left open.
      if (chunk.length === 0) continue;
      let rest: Buffer = chunk;
      for (;;) {
        const [remaining, produced, consumed] = decodeStep(context, out, rest);
        rest = rest.subarray(consumed);
        inFrame = remaining !== 0;
        if (produced > 0) sink(out.subarray(0, produced), false);
        // Done with this input once it is consumed and the decoder has nothing left to flush (a
        // step that did not fill the output buffer, or the end of a frame).
        if (rest.length === 0 && (produced < out.length || !inFrame)) break;
        if (++steps % STEPS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (inFrame) throw new Error('the body ends in the middle of a frame');
  } finally {
    releaseDecoder(decoder);
  }
}

function decodeStep(context: ZstdBinding.DCtx, out: Buffer, input: Buffer): ZstdBinding.StreamResult {
  try {
    return context.decompressStream(out, input);
  } catch (error) {
    // zstd's own words for a window above windowLogMax; say which limit it is.
    if (error instanceof Error && /too much memory/i.test(error.message)) {
      error.message += ` (windows above ${2 ** WINDOW_LOG_MAX / 1024 / 1024} MiB are refused, as HTTP's zstd content coding allows)`;
    }
    throw error;
  }
}

/** The body without decompression, read with plain events: the common case, and the fastest. */
function readPlain(
  source: Readable,
  maxBytes: number,
  grown: (bytes: number) => void,
  allocate?: (bytes: number) => Buffer,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sent = 0;
    const finish = (error?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (error) {
        // Stop reading; the socket stays open for the answer (which then closes the connection).
        source.pause();
        reject(error);
      } else {
        resolve(
          chunks.length === 1
            ? chunks[0]!
            : allocate
              ? concatInto(allocate(sent), chunks)
              : Buffer.concat(chunks, sent),
        );
      }
    };
    const onData = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > maxBytes) return finish(new BodyTooLargeError(maxBytes, false));
      try {
        grown(sent);
      } catch (error) {
        return finish(error as Error);
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) =>
      finish(new BodyAbortedError('client closed the request before its body was complete', { cause: error }));
    const onClose = () => finish(new BodyAbortedError('client closed the request before its body was complete'));
    source.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

function concatInto(target: Buffer, chunks: readonly Buffer[]): Buffer {
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(target, at);
  return target;
}

function classify(error: unknown, sourceFailed: boolean): Error {
  if (error instanceof BodyTooLargeError) return error;
  if (sourceFailed)
    return new BodyAbortedError('client closed the request before its body was complete', { cause: error });
  return new BodyCodingError(error instanceof Error ? error.message : String(error), { cause: error });
}

// Reads a request body into memory, decompressing it on the way, and stops as soon as either the
// bytes sent or the bytes they decompress to exceed the limit — so that a small compressed "bomb"
// costs at most `maxBytes` of memory, never its full decompressed size.

import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createInflate } from 'node:zlib';
import { DecompressStream } from 'zstd-napi';
import type { BodyCoding } from './media.ts';

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

function decompressorFor(coding: Exclude<BodyCoding, 'identity'>): Transform {
  switch (coding) {
    case 'gzip':
      return createGunzip();
    // HTTP's `deflate` is the zlib format (RFC 9110 §8.4.1.2), which is what OTLP exporters send.
    case 'deflate':
      return createInflate();
    case 'zstd':
      return new DecompressStream();
  }
}

export async function readBody(source: Readable, coding: BodyCoding, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let sent = 0;
  let sourceFailed = false;
  // The request stream is iterated without destroying it on error, so the socket stays open for
  // the 413/400 answer.
  async function* counted(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        sent += chunk.length;
        if (sent > maxBytes) throw new BodyTooLargeError(maxBytes, false);
        yield chunk;
      }
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) sourceFailed = true;
      throw error;
    }
  }

  if (coding === 'identity') return readPlain(source, maxBytes);

  let size = 0;
  const decompressor = decompressorFor(coding);
  try {
    await pipeline(counted, decompressor, async (inflated: AsyncIterable<Buffer>) => {
      for await (const chunk of inflated) {
        size += chunk.length;
        if (size > maxBytes) throw new BodyTooLargeError(maxBytes, true);
        chunks.push(chunk);
      }
    });
  } catch (error) {
    const classified = classify(error, sourceFailed);
    if (classified instanceof BodyCodingError) classified.message = `invalid ${coding} stream: ${classified.message}`;
    throw classified;
  }
  return Buffer.concat(chunks, size);
}

/** The body without decompression, read with plain events: the common case, and the fastest. */
function readPlain(source: Readable, maxBytes: number): Promise<Buffer> {
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
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, sent));
      }
    };
    const onData = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > maxBytes) finish(new BodyTooLargeError(maxBytes, false));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(new BodyAbortedError('client closed the request before its body was complete', { cause: error }));
    const onClose = () => finish(new BodyAbortedError('client closed the request before its body was complete'));
    source.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

function classify(error: unknown, sourceFailed: boolean): Error {
  if (error instanceof BodyTooLargeError) return error;
  if (sourceFailed) return new BodyAbortedError('client closed the request before its body was complete', { cause: error });
  return new BodyCodingError(error instanceof Error ? error.message : String(error), { cause: error });
}

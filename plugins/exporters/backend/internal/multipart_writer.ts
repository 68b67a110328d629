// Writes one upload body in the backend's multipart ingestion format (trace-model.md §7.1) straight
// into a zstd stream: for each run a `post.<id>` part (the run without inputs and outputs), then
// `post.<id>.inputs` and `post.<id>.outputs` when present, each part with `Content-Type:
// application/json` and `Content-Length`, closed by `--<boundary>--`.
//
// A run is serialised completely before any of its bytes are written, so a run that cannot be
// encoded (a bigint, a cycle) is refused whole and never leaves half its parts in the body.

import { randomBytes } from 'node:crypto';
import type { Run } from '../../../../src/model/runs.ts';
import { ZstdStreamCompressor } from './zstd_stream.ts';

export const BOUNDARY_PREFIX = '----LangSmithFormBoundary-';

/** A run that cannot be serialised to JSON; the batch goes on without it. */
export class UnencodableRunError extends Error {
  override readonly name = 'UnencodableRunError';
}

export interface EncodedBatch {
  /** The zstd-compressed multipart body. */
  readonly body: Buffer;
  readonly boundary: string;
  /** Runs in the body. */
  readonly runs: number;
  /** Uncompressed body size. */
  readonly rawBytes: number;
}

export function newBoundary(): string {
  return BOUNDARY_PREFIX + randomBytes(8).readBigUInt64BE().toString(36);
}

/** The `Content-Type` header value for a body written with `boundary`. */
export function multipartContentType(boundary: string): string {
  return `multipart/form-data; boundary=${boundary}`;
}

export class MultipartZstdWriter {
  private readonly compressor: ZstdStreamCompressor;
  private count = 0;

  constructor(
    compressionLevel: number,
    readonly boundary: string = newBoundary(),
  ) {
    this.compressor = new ZstdStreamCompressor(compressionLevel);
  }

  /** Uncompressed bytes written so far. */
  get rawBytes(): number {
    return this.compressor.raw;
  }

  get runs(): number {
    return this.count;
  }

  /** Adds one run's parts. Throws UnencodableRunError (and writes nothing) when it cannot be encoded. */
  addRun(run: Run): void {
    const parts = encodeRunParts(run);
    for (const [name, json] of parts) this.writePart(name, json);
    this.count++;
  }

  finish(): EncodedBatch {
    this.compressor.write(Buffer.from(`--${this.boundary}--\r\n`));
    const body = this.compressor.finish();
    return { body, boundary: this.boundary, runs: this.count, rawBytes: this.compressor.raw };
  }

  private writePart(name: string, json: Buffer): void {
    const head =
      `--${this.boundary}\r\n` +
      `Content-Disposition: form-data; name="${name}"\r\n` +
      `Content-Type: application/json\r\n` +
      `Content-Length: ${json.byteLength}\r\n\r\n`;
    this.compressor.write(Buffer.from(head));
    this.compressor.write(json);
    this.compressor.write(CRLF);
  }
}

const CRLF = Buffer.from('\r\n');

/** The parts of one run, serialised: `[partName, json]` in body order. */
export function encodeRunParts(run: Run): [string, Buffer][] {
  const { inputs, outputs, ...rest } = run;
  if (typeof run.id !== 'string' || !/^[0-9A-Za-z-]+$/.test(run.id)) {
    throw new UnencodableRunError(`run id ${JSON.stringify(run.id)} cannot name a multipart part`);
  }
  try {
    const parts: [string, Buffer][] = [[`post.${run.id}`, Buffer.from(JSON.stringify(rest))]];
    if (inputs != null) parts.push([`post.${run.id}.inputs`, Buffer.from(JSON.stringify(inputs))]);
    if (outputs != null) parts.push([`post.${run.id}.outputs`, Buffer.from(JSON.stringify(outputs))]);
    return parts;
  } catch (error) {
    throw new UnencodableRunError(`run ${run.id} cannot be encoded as JSON`, { cause: error });
  }
}

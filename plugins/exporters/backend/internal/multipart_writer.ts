// Writes one upload body in the backend's multipart ingestion format (see the exporter's README,
// "Body format") straight
// into a zstd stream: for each run a `post.<id>` part (the run without inputs and outputs), then
// `post.<id>.inputs` and `post.<id>.outputs` when present, each part with `Content-Type:
// application/json` and `Content-Length`, closed by `--<boundary>--`.
//
// A run is serialised completely before any of its bytes are written, so a run that cannot be
// encoded (a bigint, a cycle) is refused whole and never leaves half its parts in the body.

import { randomFillSync } from 'node:crypto';
import type { Run } from 'tracepipe/plugin';
import type { RunJson } from 'tracepipe/plugin';
import { encodedRunJson, runJson } from 'tracepipe/plugin';
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

// The random bits of boundaries, drawn for 64 boundaries at a time. A `randomBytes(8)` per
// boundary cost ~2 µs in a loop of them but 25–35 µs in the proxy, between batches of other work
// (one call into Node's crypto jobs and OpenSSL per upload, their code and data out of the caches):
// ~1 % of the proxy's CPU samples, against ~5 µs for a boundary from this block (bench/pipeline
// README, 2026-11-28).
const boundaryBits = Buffer.alloc(8 * 64);
let boundaryBitsUsed = boundaryBits.length;

export function newBoundary(): string {
  if (boundaryBitsUsed === boundaryBits.length) {
    randomFillSync(boundaryBits);
    boundaryBitsUsed = 0;
  }
  const bits = boundaryBits.readBigUInt64BE(boundaryBitsUsed);
  boundaryBitsUsed += 8;
  return BOUNDARY_PREFIX + bits.toString(36);
}

/** The `Content-Type` header value for a body written with `boundary`. */
export function multipartContentType(boundary: string): string {
  return `multipart/form-data; boundary=${boundary}`;
}

export class MultipartZstdWriter {
  private readonly compressor: ZstdStreamCompressor;
  /** Every part's head up to its name. */
  private readonly partHead: string;
  private count = 0;

  constructor(
    compressionLevel: number,
    readonly boundary: string = newBoundary(),
  ) {
    this.compressor = new ZstdStreamCompressor(compressionLevel);
    this.partHead = `--${boundary}\r\nContent-Disposition: form-data; name="`;
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
    for (const { name, body } of parts) this.writePart(name, body);
    this.count++;
  }

  finish(): EncodedBatch {
    const tail = `--${this.boundary}--\r\n`;
    this.compressor.writeString(tail, Buffer.byteLength(tail));
    const body = this.compressor.finish();
    return { body, boundary: this.boundary, runs: this.count, rawBytes: this.compressor.raw };
  }

  private writePart(name: string, body: readonly string[]): void {
    // The head, JSON and CRLF are encoded straight into the compressor's stage rather than through
    // a Buffer each: 8.5 → 6.4 µs of CPU per span for the writer (bench/pipeline/stages.ts).
    this.compressor.writeWithLength(`${this.partHead}${name}${PART_HEAD_END}`, '\r\n\r\n', body, '\r\n');
  }
}

/** What follows a part's name in its head, up to its length. */
const PART_HEAD_END = '"\r\nContent-Type: application/json\r\nContent-Length: ';

/** One part of a run: its name and its JSON text, in pieces to be written one after another. */
export interface RunPart {
  readonly name: string;
  readonly body: readonly string[];
}

const RUN_ID = /^[0-9A-Za-z-]+$/;

/** The parts of one run, serialised, in body order. */
export function encodeRunParts(run: Run): RunPart[] {
  if (typeof run.id !== 'string' || !RUN_ID.test(run.id)) {
    throw new UnencodableRunError(`run id ${JSON.stringify(run.id)} cannot name a multipart part`);
  }
  // An update of a run sent before (see Run.update) is the ingest API's patch.
  const operation = run.update ? 'patch' : 'post';
  let json: RunJson;
  try {
    // The batch processor leaves each run's text on it (src/model/run-json.ts): copied, not made
    // again. `extra` holds what runs share (the resource's attributes, tool definitions), whose
    // text is copied in rather than made again for every run.
    json = encodedRunJson(run) ?? runJson(run);
  } catch (error) {
    throw new UnencodableRunError(`run ${run.id} cannot be encoded as JSON`, { cause: error });
  }
  const name = `${operation}.${run.id}`;
  const parts: RunPart[] = [{ name, body: json.main }];
  if (json.inputs !== undefined) parts.push({ name: `${name}.inputs`, body: [json.inputs] });
  if (json.outputs !== undefined) parts.push({ name: `${name}.outputs`, body: [json.outputs] });
  return parts;
}

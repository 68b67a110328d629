// Writes one upload body in the backend's multipart ingestion format (see the exporter's README,
// "Body format") straight
// into a zstd stream: for each run a `post.<id>` part (the run without inputs and outputs), then
// `post.<id>.inputs` and `post.<id>.outputs` when present, each part with `Content-Type:
// application/json` and `Content-Length`, closed by `--<boundary>--`.
//
// A run is serialised completely before any of its bytes are written, so a run that cannot be
// encoded (a bigint, a cycle) is refused whole and never leaves half its parts in the body.

import { randomBytes } from 'node:crypto';
import type { Run } from 'tracepipe/plugin';
import { jsonWithShared } from 'tracepipe/plugin';
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
    this.compressor.writeWithLength(`${this.partHead}${name}${PART_HEAD_END}`, '\r\n\r\n', body);
    this.compressor.writeString('\r\n', 2);
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
  const { inputs, outputs, extra, update, ...rest } = run;
  if (typeof run.id !== 'string' || !RUN_ID.test(run.id)) {
    throw new UnencodableRunError(`run id ${JSON.stringify(run.id)} cannot name a multipart part`);
  }
  // An update of a run sent before (see Run.update) is the ingest API's patch.
  const operation = update ? 'patch' : 'post';
  try {
    const name = `${operation}.${run.id}`;
    const parts: RunPart[] = [{ name, body: withExtra(jsonText(rest), extra) }];
    if (inputs != null) parts.push({ name: `${name}.inputs`, body: [jsonText(inputs)] });
    if (outputs != null) parts.push({ name: `${name}.outputs`, body: [jsonText(outputs)] });
    return parts;
  } catch (error) {
    throw new UnencodableRunError(`run ${run.id} cannot be encoded as JSON`, { cause: error });
  }
}

/**
 * The run's JSON text with `extra` added as its last member, in pieces. `extra` holds what runs
 * share (the resource's attributes, tool definitions: src/model/shared-json.ts), whose text is
 * copied in rather than made again for every run: 4.1 → 2.8 µs per run for the run part of
 * bench/pipeline's realistic model calls. The pieces are written one after another rather than
 * joined into one string, which the write would have flattened into a copy of the whole part.
 */
function withExtra(runText: string, extra: unknown): string[] {
  const extraText = jsonWithShared(extra, EXTRA_DEPTH);
  if (extraText === undefined) return [runText];
  return [runText.slice(0, -1), runText.length > 2 ? ',"extra":' : '"extra":', extraText, '}'];
}

/** `extra` → `invocation_params` → `tools`: the deepest shared value the genai processor places. */
const EXTRA_DEPTH = 2;

/** JSON text of a value; throws when it has none (a function or symbol serialises to nothing). */
function jsonText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
  return text;
}

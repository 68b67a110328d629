// Reads a multipart body written by MultipartZstdWriter back into runs. The exporter needs it to
// split a batch that was stored on disk and later rejected as a whole (400/413/422); the tests'
// backend stub uses it to check what arrived. It is strict: every part must carry a name, a JSON
// content type and a Content-Length that matches, so a malformed body is an error, not a guess.

import type { Run } from 'tracepipe/plugin';

export interface MultipartPart {
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
}

export class MultipartFormatError extends Error {
  override readonly name = 'MultipartFormatError';
}

/** The boundary named by a `multipart/form-data; boundary=...` header value. */
export function boundaryOf(contentType: string | undefined): string {
  const match = /^multipart\/form-data;\s*boundary=("?)([^";]+)\1\s*$/i.exec(contentType ?? '');
  if (!match) throw new MultipartFormatError(`not a multipart/form-data content type: ${contentType}`);
  return match[2]!;
}

export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let offset = 0;
  for (;;) {
    if (!body.subarray(offset, offset + delimiter.length).equals(delimiter)) {
      throw new MultipartFormatError(`expected a boundary at byte ${offset}`);
    }
    offset += delimiter.length;
    const after = body.toString('latin1', offset, offset + 2);
    if (after === '--') {
      if (body.toString('latin1', offset + 2) !== '\r\n')
        throw new MultipartFormatError('bytes after the closing boundary');
      return parts;
    }
    if (after !== '\r\n') throw new MultipartFormatError(`expected CRLF after the boundary at byte ${offset}`);
    offset += 2;
    const headerEnd = body.indexOf('\r\n\r\n', offset, 'latin1');
    if (headerEnd < 0) throw new MultipartFormatError('part headers are not terminated');
    const headers = new Map<string, string>();
    for (const line of body.toString('utf8', offset, headerEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new MultipartFormatError(`malformed part header: ${line}`);
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    offset = headerEnd + 4;
    const name = /^form-data;\s*name="([^"]+)"$/.exec(headers.get('content-disposition') ?? '')?.[1];
    if (!name) throw new MultipartFormatError('part without a form-data name');
    const contentType = headers.get('content-type');
    if (!contentType) throw new MultipartFormatError(`part ${name} has no Content-Type`);
    const lengthText = headers.get('content-length');
    if (!lengthText || !/^\d+$/.test(lengthText)) throw new MultipartFormatError(`part ${name} has no Content-Length`);
    const length = Number(lengthText);
    if (offset + length + 2 > body.length) throw new MultipartFormatError(`part ${name} is truncated`);
    const partBody = body.subarray(offset, offset + length);
    offset += length;
    if (body.toString('latin1', offset, offset + 2) !== '\r\n') {
      throw new MultipartFormatError(`part ${name} is longer than its Content-Length`);
    }
    offset += 2;
    parts.push({ name, contentType, body: partBody });
  }
}

/**
 * Assembles runs from `post.<id>`, `post.<id>.inputs` and `post.<id>.outputs` parts (and `patch.`
 * ones, as runs with `update: true`), in the order their run parts appear. Field parts must follow
 * their run's part.
 */
export function runsFromParts(parts: readonly MultipartPart[]): Run[] {
  const runs = new Map<string, Run>();
  for (const part of parts) {
    const match = /^(post|patch)\.([^.]+)(?:\.(inputs|outputs))?$/.exec(part.name);
    if (!match) throw new MultipartFormatError(`unexpected part name ${part.name}`);
    if (part.contentType !== 'application/json') throw new MultipartFormatError(`part ${part.name} is not JSON`);
    const operation = match[1]!;
    const runId = match[2]!;
    // The pattern admits only these two fields.
    const field = match[3] === 'inputs' || match[3] === 'outputs' ? match[3] : undefined;
    // A patch is kept apart from a post of the same run (both may be in one body), marked as an update.
    const id = operation === 'patch' ? `patch:${runId}` : runId;
    let value: unknown;
    try {
      value = JSON.parse(part.body.toString('utf8'));
    } catch (error) {
      throw new MultipartFormatError(`part ${part.name} is not valid JSON`, { cause: error });
    }
    if (field === undefined) {
      if (runs.has(id)) throw new MultipartFormatError(`run ${runId} appears twice`);
      runs.set(id, operation === 'patch' ? { ...(value as Run), update: true } : (value as Run));
      continue;
    }
    const run = runs.get(id);
    if (!run) throw new MultipartFormatError(`part ${part.name} comes before ${operation}.${runId}`);
    run[field] = value as Record<string, unknown>;
  }
  return [...runs.values()];
}

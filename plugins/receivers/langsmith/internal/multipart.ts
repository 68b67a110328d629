// Splits a multipart/form-data body into its parts, synchronously. Written here rather than taken
// from a library because the receiver's journal replays a request through a synchronous decoder
// (tracepipe/receiverhelper's `restore`) and every error must name the part it is about; the
// stream parsers (busboy, undici's `formData()`) are asynchronous and report "malformed body". The
// body is already in memory and bounded (max_body_bytes), so one pass of `indexOf` over it is all
// it takes: one pass over a 100-run request (bench/pipeline/ingest-paths.ts measures the whole path).

export interface Part {
  readonly name: string;
  /** The part's media type, without parameters (`application/json`); empty when none was sent. */
  readonly contentType: string;
  readonly body: Buffer;
}

/** The body is not multipart/form-data at all (no part can be trusted): answered 400. */
export class MultipartError extends Error {
  override readonly name = 'MultipartError';
}

/** The boundary of a `multipart/form-data; boundary=...` Content-Type; undefined when it is not one. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^\s*multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

export function splitMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const next = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const parts: Part[] = [];
  // A preamble before the first delimiter is allowed (RFC 2046) and ignored.
  let offset = body.indexOf(delimiter);
  if (offset < 0) throw new MultipartError(`no "--${boundary}" delimiter in the body`);
  offset += delimiter.length;
  for (;;) {
    const after = body.toString('latin1', offset, offset + 2);
    if (after === '--') return parts;
    if (after !== '\r\n') throw new MultipartError(`expected CRLF after the delimiter at byte ${offset}`);
    offset += 2;
    const headerEnd = body.indexOf('\r\n\r\n', offset, 'latin1');
    if (headerEnd < 0) throw new MultipartError(`the headers of part ${parts.length + 1} do not end`);
    const headers = parseHeaders(body.toString('utf8', offset, headerEnd), parts.length + 1);
    const name = /\bname="([^"]*)"/i.exec(headers.get('content-disposition') ?? '')?.[1];
    if (name === undefined) throw new MultipartError(`part ${parts.length + 1} has no form-data name`);
    const start = headerEnd + 4;
    const end = body.indexOf(next, start);
    if (end < 0) throw new MultipartError(`part ${name} does not end with a delimiter (truncated body?)`);
    const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    parts.push({ name, contentType, body: body.subarray(start, end) });
    offset = end + next.length;
  }
}

function parseHeaders(text: string, index: number): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0)
      throw new MultipartError(`part ${index} has a malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

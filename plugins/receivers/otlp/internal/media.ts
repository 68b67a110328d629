// Which OTLP encoding a request's Content-Type names; checked before any of the body is read (the
// Content-Encoding is read by src/http/body.ts).

import type { OtlpEncoding } from 'tracepipe/otlp';

const ENCODINGS: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

export const SUPPORTED_CONTENT_TYPES = Object.keys(ENCODINGS);

/** The encoding named by a Content-Type header (parameters such as charset are ignored). */
export function encodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return Object.hasOwn(ENCODINGS, mediaType) ? ENCODINGS[mediaType] : undefined;
}

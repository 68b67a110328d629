// Which OTLP encoding a request's Content-Type names, and which decompression its
// Content-Encoding asks for. Both are checked before any of the body is read.

import type { OtlpEncoding } from '../../../../src/otlp/response.ts';

export type BodyCoding = 'identity' | 'gzip' | 'deflate' | 'zstd';

const ENCODINGS: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

const CODINGS: Record<string, BodyCoding> = {
  identity: 'identity',
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  zstd: 'zstd',
};

export const SUPPORTED_CONTENT_TYPES = Object.keys(ENCODINGS);
export const SUPPORTED_CODINGS = ['identity', 'gzip', 'deflate', 'zstd'];

/** The encoding named by a Content-Type header (parameters such as charset are ignored). */
export function encodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return Object.hasOwn(ENCODINGS, mediaType) ? ENCODINGS[mediaType] : undefined;
}

/**
 * The coding named by a Content-Encoding header; undefined when it is unsupported. Stacked codings
 * (`gzip, zstd`) are unsupported: no OTLP exporter sends them.
 */
export function codingOf(header: string | undefined): BodyCoding | undefined {
  if (header === undefined) return 'identity';
  const name = header.trim().toLowerCase();
  if (name === '') return 'identity';
  return Object.hasOwn(CODINGS, name) ? CODINGS[name] : undefined;
}

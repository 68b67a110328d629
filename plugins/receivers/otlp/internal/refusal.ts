// A request the receiver refuses before or instead of the pipeline, described once for both
// protocols: the HTTP status, the gRPC code (by default the one OTLP pairs with that status), the
// message, and how long a client should wait before sending it again.

import { grpcCodeForHttpStatus } from 'tracepipe/otlp';

export const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_RESOURCE_EXHAUSTED = 8;
export const GRPC_UNAVAILABLE = 14;

export interface RefusalOptions {
  /** The client may send the request again after this many ms (HTTP `Retry-After`, gRPC RetryInfo). */
  readonly retryAfterMs?: number;
  /** HTTP: close the connection after the answer (the body was not read to its end). */
  readonly closeConnection?: boolean;
  /** gRPC: a code other than the one paired with `statusCode`. */
  readonly grpcCode?: number;
}

export class Refusal extends Error {
  override readonly name = 'Refusal';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly options: RefusalOptions = {},
  ) {
    super(message);
  }

  get grpcCode(): number {
    return this.options.grpcCode ?? grpcCodeForHttpStatus(this.statusCode);
  }

  get retryAfterMs(): number | undefined {
    return this.options.retryAfterMs;
  }

  /** The headers of the HTTP answer. */
  httpHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.options.retryAfterMs !== undefined)
      headers['retry-after'] = String(Math.max(1, Math.ceil(this.options.retryAfterMs / 1000)));
    if (this.options.closeConnection) headers.connection = 'close';
    return headers;
  }
}

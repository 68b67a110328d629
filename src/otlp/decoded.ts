// What the OTLP decoders return: the decoded batch plus the spans that were refused one by one
// (invalid ids), which the receiver reports to the client as an OTLP partial success.

import type { SpanBatch } from '../model/spans.ts';

export interface DecodedTraceRequest {
  /** The accepted spans; scopes and resources left without spans are kept out. */
  readonly batch: SpanBatch;
  /** Spans refused individually (their ids were invalid). */
  readonly rejected: number;
  /** Set when `rejected > 0`: how many and why, naming the first refused span. */
  readonly errorMessage?: string;
}

/** Collects individually refused spans while a request is decoded. */
export class SpanRejections {
  count = 0;
  private first?: string;

  reject(path: string, reason: string): void {
    this.count++;
    this.first ??= `${path}: ${reason}`;
  }

  result(batch: SpanBatch): DecodedTraceRequest {
    if (this.count === 0) return { batch, rejected: 0 };
    const noun = this.count === 1 ? 'span' : 'spans';
    return { batch, rejected: this.count, errorMessage: `${this.count} ${noun} rejected; first: ${this.first}` };
  }
}

/** Largest nesting of AnyValue arrays/kvlists accepted, so hostile input cannot exhaust the stack. */
export const MAX_VALUE_DEPTH = 64;

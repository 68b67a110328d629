// The receiver's coded errors: each answer other than 202 carries one of these codes in its JSON
// body (`{"statusCode", "error", "code", "message"}`), so clients can tell them apart without
// parsing messages. Codes are wire values: once clients see one, it stays.

import { createCodedError } from 'tracepipe/plugin';

/** A line that is not a span of the documented shape; the message names the line and the field. */
export const InvalidSpansError = createCodedError('TP_ERR_NDJSON_INVALID', '%s', 400);
/** A Content-Type or Content-Encoding the receiver does not read. */
export const UnsupportedMediaError = createCodedError('TP_ERR_NDJSON_UNSUPPORTED_MEDIA', '%s', 415);
/** A body over `max_body_bytes` (as sent or decompressed), or larger than the journal can ever hold. */
export const BodyTooLargeAnswer = createCodedError('TP_ERR_NDJSON_TOO_LARGE', '%s', 413);
/** Memory is at `memory_limit_bytes`: retry after `Retry-After`. */
export const ThrottledError = createCodedError('TP_ERR_NDJSON_THROTTLED', 'the pipeline is full, retry later: %s', 429);
/** The journal cannot take the request now, or the pipeline failed: retry after `Retry-After`. */
export const UnavailableError = createCodedError('TP_ERR_NDJSON_UNAVAILABLE', 'retry later: %s', 503);

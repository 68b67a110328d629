// Trace and span ids and timestamps for the spans of a graph run. The trace id is the run id's 16
// bytes, so a run and its trace line up in any backend without a lookup table.

import { createHash, randomBytes } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The run id as a 32-hex-digit trace id; a run id that is not a UUID is hashed instead. */
export function traceIdFromRunId(runId: string): string {
  if (UUID.test(runId)) {
    const hex = runId.replace(/-/g, '').toLowerCase();
    if (!/^0+$/.test(hex)) return hex;
  }
  return createHash('sha256').update(runId).digest('hex').slice(0, 32);
}

// Random bytes are drawn in blocks: one randomBytes call per span costs more than the rest of
// the span's bookkeeping.
const POOL_BYTES = 8 * 512;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

/** A random, non-zero 16-hex-digit span id (an all-zero id is invalid in OTLP). */
export function newSpanId(): string {
  for (;;) {
    if (poolOffset === POOL_BYTES) {
      pool = randomBytes(POOL_BYTES);
      poolOffset = 0;
    }
    const id = pool.toString('hex', poolOffset, poolOffset + 8);
    poolOffset += 8;
    if (id !== '0000000000000000') return id;
  }
}

/** Now, in Unix epoch nanoseconds, with sub-millisecond precision from the monotonic clock. */
export function nowUnixNano(): bigint {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}

// The trace id of a graph run: the run id's 16 bytes, so a run and its trace line up in any backend
// without a lookup table. (Span ids and timestamps come from the OpenTelemetry SDK.)

import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The run id as a 32-hex-digit trace id; a run id that is not a UUID is hashed instead. */
export function traceIdFromRunId(runId: string): string {
  if (UUID.test(runId)) {
    const hex = runId.replace(/-/g, '').toLowerCase();
    if (!/^0+$/.test(hex)) return hex;
  }
  return createHash('sha256').update(runId).digest('hex').slice(0, 32);
}

// Backend hung (accepts connections, never answers); 20k spans sent, then SIGTERM with
// SHUTDOWN_TIMEOUT_MS=2000. The stopping proxy cannot deliver anything: it must keep it on disk
// (exit 0 is acceptable only if nothing was dropped; a reported loss means a non-zero code), and
// the next start on the same DATA_DIR, with the backend back, delivers all of it. Measured before
// the journal: 12 800 of 20 000 lost, exit 0.

import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertFewDuplicates, assertHonestExit, assertNothingLost, assertStoppedCleanly } from './harness.ts';
import { hungSigterm } from './scenarios.ts';

describe('fault: backend hung, SIGTERM with a 2 s shutdown timeout, restart', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(
    async () => (result = await hungSigterm(lab, { spans: 20_000, concurrency: 8 }, { shutdownTimeoutMs: 2000 })),
    { timeout: 120_000 },
  );
  after(() => lab.cleanup());

  it('every acknowledged span reaches the backend after the restart', () => assertNothingLost(result));
  it('duplicates stay under 1 % of the acknowledged spans', () => assertFewDuplicates(result));
  it('the SIGTERM exit is honest: 0 and "Stopped cleanly." only if nothing acknowledged was dropped', () =>
    assertHonestExit(result.faultExit, result.lost, result));
  it('the restarted proxy stops cleanly once it has drained', () => assertStoppedCleanly(result.finalExit, result));
});

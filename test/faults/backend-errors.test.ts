// A backend answering 503 to every upload while 10k spans are sent, then healthy: the batches that
// used up their retries wait on disk and are replayed once it is back — no restart, nothing lost.

import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertFewDuplicates, assertNothingLost, assertStoppedCleanly } from './harness.ts';
import { errorOutage } from './scenarios.ts';

describe('fault: backend answering 503, then healthy (no restart)', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(async () => (result = await errorOutage(lab, { spans: 10_000 }, { status: 503 })), { timeout: 120_000 });
  after(() => lab.cleanup());

  it('every acknowledged span arrives once the backend is back', () => assertNothingLost(result));
  it('duplicates stay under 1 % of the acknowledged spans', () => assertFewDuplicates(result));
  it('SIGTERM afterwards exits 0 with "Stopped cleanly."', () => assertStoppedCleanly(result.finalExit, result));
});

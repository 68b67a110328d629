// Backend hung; 20k spans acknowledged (OTLP/JSON this time); kill -9. The backend answers again,
// the proxy restarts on the same DATA_DIR, and every acknowledged span must arrive. Measured before
// the journal: 20 000 of 20 000 lost.

import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertFewDuplicates, assertNothingLost, assertStoppedCleanly } from './harness.ts';
import { kill9Hung } from './scenarios.ts';

describe('fault: backend hung, kill -9, restart against the recovered backend', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(async () => (result = await kill9Hung(lab, { spans: 20_000, concurrency: 8, encoding: 'json' })), {
    timeout: 120_000,
  });
  after(() => lab.cleanup());

  it('every acknowledged span reaches the backend after the restart', () => assertNothingLost(result));
  it('duplicates stay under 1 % of the acknowledged spans', () => assertFewDuplicates(result));
  it('the restarted proxy stops cleanly once it has drained', () => assertStoppedCleanly(result.finalExit, result));
});

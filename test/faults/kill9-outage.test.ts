// Backend down (connections refused) while load flows; kill -9 with the sender still sending.
// The backend comes back on the same port, the proxy restarts on the same DATA_DIR, and every span
// it had acknowledged must arrive. Measured before the journal: 700–800 of ~9 900 lost.

import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertFewDuplicates, assertNothingLost, assertStoppedCleanly } from './harness.ts';
import { kill9Outage } from './scenarios.ts';

describe('fault: backend down, kill -9 with load flowing, restart against the recovered backend', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(
    async () =>
      (result = await kill9Outage(lab, { spans: 20_000, perRequest: 50, concurrency: 4 }, { killAfterSpans: 10_000 })),
    {
      timeout: 120_000,
    },
  );
  after(() => lab.cleanup());

  it('every acknowledged span reaches the backend after the restart', () => assertNothingLost(result));
  it('duplicates stay under 1 % of the acknowledged spans', () => assertFewDuplicates(result));
  it('the restarted proxy stops cleanly once it has drained', () => assertStoppedCleanly(result.finalExit, result));
});

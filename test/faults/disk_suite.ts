// The checks of the "no room for the journal" faults (disk-cap.test.ts, disk-tmpfs.test.ts): what
// cannot be kept is refused with 503 and Retry-After, what was acknowledged arrives once the
// backend is back (no restart), and the proxy then accepts requests again.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertFewDuplicates, assertHonestExit, assertNothingLost, describeResult } from './harness.ts';

interface WhileFull {
  acked_spans: number;
  refused_by_status: Record<string, number>;
  refused_without_retry_after: number;
  failures: Record<string, number>;
}

export function diskFullSuite(
  title: string,
  run: (lab: FaultLab) => Promise<FaultResult>,
  lab = new FaultLab(),
  skip: string | false = false,
): void {
  describe(title, { skip }, () => {
    let result: FaultResult;
    before(async () => (result = await run(lab)), { timeout: 150_000 });
    after(() => lab.cleanup());

    it('while there is no room, requests are refused with 503 and a Retry-After header, and none fails otherwise', () => {
      const full = result.details.while_full as WhileFull;
      assert.ok(
        (full.refused_by_status['503'] ?? 0) > 0,
        `no request was refused with 503, so the journal never ran out of room: ${describeResult(result)}`,
      );
      assert.equal(full.refused_without_retry_after, 0, `refusals without Retry-After: ${describeResult(result)}`);
      assert.deepEqual(full.failures, {}, `requests failed other than by a 429/503 refusal: ${describeResult(result)}`);
    });

    it('every acknowledged span reaches the backend once it is back, without a restart', () =>
      assertNothingLost(result, 'after recovery (no restart)'));

    it('nothing acknowledged is lost for good: what recovery did not deliver, a restart does', () => {
      const afterRestart = result.details.after_restart as { lost: number } | undefined;
      assert.equal(afterRestart?.lost ?? result.lost, 0, describeResult(result));
    });

    it('after recovery the proxy accepts requests again, more than the journal or the disk could hold at once', () =>
      assert.equal(result.details.accepted_again, true, describeResult(result)));

    it('duplicates stay under 1 % of the acknowledged spans', () => assertFewDuplicates(result));

    // Losses while running are counted and logged, not an exit code: only the shutdown's own losses are.
    it('SIGTERM afterwards exits 0 with "Stopped cleanly." exactly when it reports no loss', () =>
      assertHonestExit(result.finalExit, undefined, result));
  });
}

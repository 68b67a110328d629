// The configuration that cannot keep its promise, on purpose: configs/proxy.yaml without the
// receiver journal and with the exporter's disk queue disabled, a hung backend, SIGTERM with a
// 2 s shutdown timeout. The acknowledged spans are lost; the proxy must say so — a non-zero exit
// code, no "Stopped cleanly.", ERROR lines, and a loss count that covers what never arrived.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, describeResult } from './harness.ts';
import { lossySigterm } from './scenarios.ts';

describe('fault: no journal, no disk queue, backend hung, SIGTERM', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(async () => (result = await lossySigterm(lab, { spans: 5_000 }, { shutdownTimeoutMs: 2000 })), {
    timeout: 120_000,
  });
  after(() => lab.cleanup());

  it('acknowledged spans were in fact lost (the precondition of this test)', () => {
    assert.ok(result.acked > 0 && result.lost > 0, describeResult(result));
  });

  it('exits with a non-zero code', () => {
    assert.ok(result.faultExit, describeResult(result));
    assert.notEqual(result.faultExit.code, null, `killed instead of exiting: ${describeResult(result)}`);
    assert.notEqual(result.faultExit.code, 0, describeResult(result));
  });

  it('does not print "Stopped cleanly."', () =>
    assert.equal(result.faultExit?.stoppedCleanly, false, describeResult(result)));

  it('logs the loss at ERROR and counts at least every acknowledged span that never arrived', () => {
    assert.ok((result.faultExit?.errors.length ?? 0) > 0, describeResult(result));
    assert.ok((result.faultExit?.lostItemsReported ?? 0) >= result.lost, describeResult(result));
  });
});

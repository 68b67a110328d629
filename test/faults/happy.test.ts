// The harness's own check and the baseline of every fault test: with a healthy backend, every span
// the proxy acknowledged arrives at the capture backend exactly once, and SIGTERM — also the moment
// the last request was acknowledged, with runs still in the batcher — flushes everything and exits
// 0 with "Stopped cleanly.".

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FaultResult } from './harness.ts';
import { FaultLab, assertNothingLost, assertStoppedCleanly, describeResult } from './harness.ts';
import { healthy, sigtermFlush } from './scenarios.ts';

describe('fault harness, healthy backend (10k spans, protobuf)', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(async () => (result = await healthy(lab, { spans: 10_000 })), { timeout: 120_000 });
  after(() => lab.cleanup());

  it('every request is acknowledged and every acknowledged span arrives', () => {
    assert.equal(result.load.ackedSpans, 10_000, describeResult(result));
    assertNothingLost(result);
  });

  it('no span arrives twice, and the backend could parse every upload', () => {
    assert.equal(result.duplicates, 0, describeResult(result));
    assert.equal(result.unackedDelivered, 0, describeResult(result));
    assert.match(result.backend, /0 malformed/);
  });

  it('SIGTERM exits 0 with "Stopped cleanly."', () => assertStoppedCleanly(result.finalExit, result));
});

describe('fault: SIGTERM right after the last acknowledgement, healthy backend (10k spans)', () => {
  const lab = new FaultLab();
  let result: FaultResult;
  before(async () => (result = await sigtermFlush(lab, { spans: 10_000 })), { timeout: 120_000 });
  after(() => lab.cleanup());

  it('the shutdown flushes every acknowledged span to the backend (no restart)', () =>
    assertNothingLost(result, 'by the time the proxy exited'));
  it('exits 0 with "Stopped cleanly."', () => assertStoppedCleanly(result.faultExit, result));
  it('sends nothing twice', () => assert.equal(result.duplicates, 0, describeResult(result)));
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { HashRing, hashKey } from './internal/ring.ts';

/** 10 000 trace ids, the same on every run (so the measured figures are reproducible). */
const traceIds = Array.from({ length: 10_000 }, (_, i) =>
  createHash('sha256').update(`trace-${i}`).digest('hex').slice(0, 32),
);
const three = ['10.0.0.1:4318', '10.0.0.2:4318', '10.0.0.3:4318'];

function shares(ring: HashRing): Map<string, number> {
  const counts = new Map<string, number>(ring.endpoints.map((endpoint) => [endpoint, 0]));
  for (const id of traceIds) counts.set(ring.locate(id)!, counts.get(ring.locate(id)!)! + 1);
  return counts;
}

function moved(before: HashRing, after: HashRing): { moved: string[]; fraction: number } {
  const list = traceIds.filter((id) => before.locate(id) !== after.locate(id));
  return { moved: list, fraction: list.length / traceIds.length };
}

describe('the hash ring', () => {
  it('spreads 10 000 trace ids within a few percent of an even split', (t) => {
    for (const endpoints of [three, ['proxy-0:4318', 'proxy-1:4318', 'proxy-2:4318', 'proxy-3:4318', 'proxy-4:4318']]) {
      const counts = shares(new HashRing(endpoints));
      const even = traceIds.length / endpoints.length;
      const deviations = [...counts.values()].map((count) => (count - even) / even);
      t.diagnostic(
        `${endpoints.length} endpoints: ${[...counts.values()].join(' / ')} (largest deviation ${(Math.max(...deviations.map(Math.abs)) * 100).toFixed(1)} %)`,
      );
      for (const deviation of deviations) assert.ok(Math.abs(deviation) < 0.06, `deviation ${deviation}`);
    }
  });

  it('moves about 1/N of the traces when an endpoint joins, all of them to the new one', (t) => {
    const before = new HashRing(three);
    const after = new HashRing([...three, '10.0.0.4:4318']);
    const { moved: list, fraction } = moved(before, after);
    t.diagnostic(`3 → 4 endpoints: ${(fraction * 100).toFixed(1)} % of the traces moved (ideal 25 %)`);
    assert.ok(fraction > 0.2 && fraction < 0.3, `moved ${fraction}`);
    for (const id of list) assert.equal(after.locate(id), '10.0.0.4:4318');
  });

  it('moves only the traces of an endpoint that leaves', (t) => {
    const before = new HashRing(three);
    const after = new HashRing(three.filter((endpoint) => endpoint !== '10.0.0.2:4318'));
    const { moved: list, fraction } = moved(before, after);
    t.diagnostic(`3 → 2 endpoints: ${(fraction * 100).toFixed(1)} % of the traces moved (ideal 33 %)`);
    assert.ok(fraction > 0.28 && fraction < 0.39, `moved ${fraction}`);
    for (const id of list) assert.equal(before.locate(id), '10.0.0.2:4318');
    assert.equal(list.length, shares(before).get('10.0.0.2:4318'));
  });

  it('routes the same whatever the order the endpoints come in, and an empty ring routes nowhere', () => {
    const a = new HashRing(three);
    const b = new HashRing([...three].reverse());
    for (const id of traceIds.slice(0, 1000)) assert.equal(a.locate(id), b.locate(id));
    assert.ok(a.sameEndpoints([...three].reverse()));
    assert.equal(new HashRing([]).locate(traceIds[0]!), undefined);
  });

  it('keeps its hash function fixed (gateways of different versions must agree)', () => {
    // Known answers: changing them re-shuffles every trace between gateways running both versions.
    assert.deepEqual(
      ['', '0af7651916cd43dd8448eb211c80319c', 'service-a'].map(hashKey),
      [2872998923, 342580911, 401906717],
    );
  });
});

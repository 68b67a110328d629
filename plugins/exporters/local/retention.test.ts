// The exporter's side of retention: it applies its configured limits after writes, under an
// injected clock, and counts what they deleted by reason (the store's rules themselves are tested
// in src/tracestore/store.test.ts).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateAgainst, nopHost, nopSettings, tempDir, makeRun } from 'tracepipe/testing';
import type { Run } from 'tracepipe/plugin';
import { configSchema } from './config.ts';
import type { LocalExporterConfig } from './config.ts';
import { LocalExporter } from './exporter.ts';

const dir = tempDir('tp-retention-');
const at = (minute: number, second = 0) =>
  `2026-01-01T12:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;

/** A root named `name` with one child, started at `minute`. */
function trace(minute: number, name: string): Run[] {
  const root = makeRun({ name, run_type: 'chain', start_time: at(minute), end_time: at(minute, 5), session_name: 'p' });
  const child = makeRun({
    trace_id: root.id,
    parent_run_id: root.id,
    start_time: at(minute, 1),
    end_time: at(minute, 2),
    dotted_order: `${root.dotted_order}.20260101T120001000000Z${root.id}`,
    session_name: 'p',
  });
  return [root, child];
}

describe('local exporter retention', () => {
  it('enforces its limits after writes and counts deletions by reason', async () => {
    const host = nopHost();
    const config = { path: join(dir, 'exporter.db'), retention: { max_age_ms: 60_000 } };
    assert.deepEqual(validateAgainst(configSchema, config, 'local'), []);
    let now = Date.parse(at(5));
    const exporter = new LocalExporter(nopSettings('exporter', 'local', host), config as LocalExporterConfig, {
      now: () => now,
    });
    await exporter.start();
    await exporter.consume({ runs: trace(4, 'kept') }, { project: 'p' });
    assert.deepEqual(
      exporter.listTraces().map((t) => t.name),
      ['kept'],
    );
    now = Date.parse(at(20));
    await exporter.consume({ runs: trace(19, 'new') }, { project: 'p' });
    assert.deepEqual(
      exporter.listTraces().map((t) => t.name),
      ['new'],
    );
    const metrics = await host.metrics.getSingleMetricAsString('tracepipe_local_store_deleted_traces_total');
    assert.match(metrics, /reason="max_age"\} 1/);
    const runs = await host.metrics.getSingleMetricAsString('tracepipe_local_store_deleted_runs_total');
    assert.match(runs, /reason="max_age"\} 2/);
    await exporter.shutdown();
  });
});

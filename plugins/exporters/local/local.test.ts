import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { validateAgainst, nopHost, nopSettings, runComponentConformance, makeRun } from 'tracepipe/testing';
import { PermanentError } from 'tracepipe/plugin';
import type { LocalExporterConfig } from './config.ts';
import { localExporterFactory } from './index.ts';
import { InvalidTimeError, toMicros } from 'tracepipe/tracestore';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-local-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

runComponentConformance(localExporterFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: () => ({ path: join(dir, 'conformance.db') }),
  sample: () => ({ runs: [makeRun()] }),
});

function create(path: string) {
  const config = { path };
  assert.deepEqual(validateAgainst(localExporterFactory.configSchema, config, 'local'), []);
  const host = nopHost({ resolvePath: (p) => resolve(dir, p) });
  return localExporterFactory.create(nopSettings('exporter', 'local', host), config as LocalExporterConfig);
}

/** A root and `children` child runs, starting at `minute` past noon. */
function trace(minute: number, children: number, project = 'p') {
  const root = makeRun({
    name: `agent ${minute}`,
    run_type: 'chain',
    start_time: `2026-01-01T12:${String(minute).padStart(2, '0')}:00Z`,
    end_time: `2026-01-01T12:${String(minute).padStart(2, '0')}:05.5Z`,
    session_name: project,
  });
  const kids = Array.from({ length: children }, (_, i) =>
    makeRun({
      trace_id: root.id,
      parent_run_id: root.id,
      name: `llm ${i}`,
      start_time: `2026-01-01T12:${String(minute).padStart(2, '0')}:0${i + 1}.25Z`,
      end_time: `2026-01-01T12:${String(minute).padStart(2, '0')}:0${i + 1}.75Z`,
      dotted_order: `${root.dotted_order}.2026010112000${i}000000Z${i}`,
      session_name: project,
    }),
  );
  return { root, kids };
}

describe('local exporter', () => {
  it('stores runs and answers listTraces and getTrace', async () => {
    const exporter = create('store.db');
    await exporter.start();
    const t1 = trace(1, 2);
    const t2 = trace(2, 1);
    const t3 = trace(3, 0, 'other');
    // Children before their root, and across batches.
    await exporter.consume({ runs: t1.kids }, { project: 'p' });
    await exporter.consume({ runs: [t1.root, t2.root, ...t2.kids, t3.root] }, { project: 'p' });

    const listed = exporter.listTraces({ project: 'p' });
    assert.deepEqual(
      listed.map((t) => t.traceId),
      [t2.root.id, t1.root.id],
    );
    assert.deepEqual(listed[1], {
      traceId: t1.root.id,
      project: 'p',
      name: 'agent 1',
      status: 'success',
      startTime: t1.root.start_time,
      endTime: t1.root.end_time,
      durationMs: 5500,
      runCount: 3,
      errorCount: 0,
      rootRunId: t1.root.id,
      // The two model calls' usage; the root repeats it in its outputs (a chain returning the
      // model's result) and does not count.
      promptTokens: 24,
      completionTokens: 6,
      totalTokens: 30,
      model: 'gpt-4o-mini',
      tags: [],
      metadata: t1.root.extra!.metadata,
      inputPreview: 'What is the capital of France?',
      outputPreview: '{"generations":[{"text":"Paris."}]}',
    });
    assert.deepEqual(
      exporter.listTraces().map((t) => t.traceId),
      [t3.root.id, t2.root.id, t1.root.id],
    );
    assert.deepEqual(
      exporter.listTraces({ limit: 1 }).map((t) => t.traceId),
      [t3.root.id],
    );
    assert.deepEqual(
      exporter.listTraces({ project: 'p', before: listed[0]!.startTime }).map((t) => t.traceId),
      [t1.root.id],
    );
    assert.deepEqual(exporter.listTraces({ project: 'nobody' }), []);

    const whole = exporter.getTrace(t1.root.id)!;
    assert.deepEqual(whole.runs, [t1.root, ...t1.kids]);
    assert.equal(exporter.getTrace('00000000-0000-0000-0000-000000000000'), undefined);
    await exporter.shutdown();
    assert.throws(() => exporter.listTraces());
  });

  it('keeps its data across restarts and counts a re-sent run once', async () => {
    const t = trace(5, 1);
    const first = create('restart.db');
    await first.start();
    await first.consume({ runs: [t.root, ...t.kids] }, { project: 'p' });
    await first.shutdown();
    const second = create('restart.db');
    await second.start();
    await second.consume({ runs: [{ ...t.root, status: 'error', error: 'boom' }] }, { project: 'p' });
    const whole = second.getTrace(t.root.id)!;
    assert.equal(whole.summary.runCount, 2);
    assert.equal(whole.summary.status, 'error');
    assert.equal(whole.runs[0]!.error, 'boom');
    await second.shutdown();
  });

  it('refuses a batch with an unreadable time as PermanentError, storing none of it', async () => {
    const exporter = create(':memory:');
    await exporter.start();
    const good = makeRun();
    await assert.rejects(
      exporter.consume({ runs: [good, makeRun({ start_time: 'yesterday' })] }, { project: 'p' }),
      PermanentError,
    );
    assert.equal(exporter.getTrace(good.trace_id), undefined);
    await exporter.shutdown();
    await assert.rejects(exporter.consume({ runs: [good] }, { project: 'p' }));
  });

  it('orders times with any number of fraction digits (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 999_999 }),
        (ms1, us1, ms2, us2) => {
          const text = (ms: number, us: number) => {
            const base = new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
            const fraction = String(us).padStart(6, '0').replace(/0+$/, '');
            return `${base}${fraction ? '.' + fraction : ''}Z`;
          };
          const a = toMicros(text(ms1, us1));
          const b = toMicros(text(ms2, us2));
          const exact = (ms: number, us: number) => Math.floor(ms / 1000) * 1_000_000 + us;
          assert.equal(Math.sign(a - b), Math.sign(exact(ms1, us1) - exact(ms2, us2)));
        },
      ),
    );
    assert.equal(toMicros('2026-01-01T00:00:00.123456789+00:00'), Date.UTC(2026, 0, 1) * 1000 + 123456);
    for (const bad of ['', '2026-01-01', '2026-01-01 00:00:00Z', '2026-13-01T00:00:00Z']) {
      assert.throws(() => toMicros(bad), InvalidTimeError);
    }
  });
});

import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  validateAgainst,
  nopHost,
  nopSettings,
  runComponentConformance,
  makeRun,
  makeRuns,
  makeSpanBatch,
} from 'tracepipe/testing';
import { PermanentError, countSpans } from 'tracepipe/plugin';
import { decodeTraceRequestJson } from 'tracepipe/otlp';
import type { FileExporterConfig } from './config.ts';
import { fileExporterFactory } from './index.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-file-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

runComponentConformance(fileExporterFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: () => ({ path: join(dir, 'conformance', 'out.jsonl') }),
  sample: () => ({ runs: [makeRun()] }),
});

function create(config: Record<string, unknown>) {
  assert.deepEqual(validateAgainst(fileExporterFactory.configSchema, config, 'file'), []);
  const host = nopHost({ resolvePath: (path) => resolve(dir, path) });
  return fileExporterFactory.create(nopSettings('exporter', 'file', host), config as unknown as FileExporterConfig);
}

describe('file exporter', () => {
  it('appends runs and spans as JSON lines that read back', async () => {
    const exporter = create({ path: 'mixed/out.jsonl' });
    await exporter.start();
    const runs = makeRuns(3);
    const spans = makeSpanBatch(4);
    await exporter.consume({ runs }, { project: 'p1' });
    await exporter.consume(spans, { project: 'p1' });
    await exporter.shutdown();
    const lines = (await readFile(join(dir, 'mixed/out.jsonl'), 'utf8')).trim().split('\n');
    assert.equal(lines.length, 2);
    assert.deepEqual(JSON.parse(lines[0]!), { project: 'p1', runs });
    const decoded = decodeTraceRequestJson(lines[1]!);
    assert.equal(countSpans(decoded.batch), 4);
    assert.deepEqual(decoded.batch, spans);
  });

  it('keeps appending to an existing file across restarts', async () => {
    for (let i = 0; i < 2; i++) {
      const exporter = create({ path: 'restart.jsonl' });
      await exporter.start();
      await exporter.consume({ runs: makeRuns(1) }, { project: 'p' });
      await exporter.shutdown();
    }
    assert.equal((await readFile(join(dir, 'restart.jsonl'), 'utf8')).trim().split('\n').length, 2);
  });

  it('rotates by size and keeps max_files rotated files', async () => {
    const exporter = create({ path: 'rot/out.jsonl', rotation: { max_bytes: 2048, max_files: 2 } });
    await exporter.start();
    const written: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, () => {
        const runs = makeRuns(1);
        written.push(runs[0]!.id);
        return exporter.consume({ runs }, { project: 'p' });
      }),
    );
    await exporter.shutdown();
    const files = (await readdir(join(dir, 'rot'))).sort();
    assert.deepEqual(files, ['out.jsonl', 'out.jsonl.1', 'out.jsonl.2']);
    const kept: string[] = [];
    for (const name of ['out.jsonl.2', 'out.jsonl.1', 'out.jsonl']) {
      const text = await readFile(join(dir, 'rot', name), 'utf8');
      assert.ok(Buffer.byteLength(text) <= 2048);
      for (const line of text.trim().split('\n'))
        kept.push((JSON.parse(line) as { runs: { id: string }[] }).runs[0]!.id);
    }
    // The newest lines survive, in order, with no line split across files.
    assert.deepEqual(kept, written.slice(written.length - kept.length));
  });

  it('refuses a batch that cannot be encoded as PermanentError and keeps going', async () => {
    const exporter = create({ path: 'bad.jsonl', fsync: true });
    await exporter.start();
    await assert.rejects(
      exporter.consume({ runs: [makeRun({ outputs: { n: 1n as unknown } })] }, { project: 'p' }),
      PermanentError,
    );
    await exporter.consume({ runs: makeRuns(1) }, { project: 'p' });
    await exporter.shutdown();
    assert.equal((await readFile(join(dir, 'bad.jsonl'), 'utf8')).trim().split('\n').length, 1);
    await assert.rejects(exporter.consume({ runs: makeRuns(1) }, { project: 'p' }));
  });
});

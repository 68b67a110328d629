// zstd's match-finder table sizes on the proxy's own upload bodies: level 3 with zstd's tables
// (2^17 hash, 2^16 chain entries for an input of unknown size) against smaller ones, as the
// backend exporter's compressor sets them (plugins/exporters/backend/internal/zstd_stream.ts).
// Each shape's bodies are made the way the proxy makes them — OTLP/protobuf requests decoded,
// translated by `genai`, batched by `batch` (100 runs a body) and written by the exporter's writer —
// then read back to their raw multipart and compressed again with each setting in turn, the
// settings alternated round by round so that a busy machine weighs on all of them alike. Prints µs
// of CPU per run (the process's user + system time, median and best of the rounds) and the
// compression ratio.
//
//   node --import tsx bench/pipeline/zstd-tables.ts [--payload all|<shape>[,<shape>…]] [--requests 20]
//                                                   [--rounds 21] [--logs 17/16,14/14,13/13]
//
// `--logs` lists the settings after zstd's own, each as hashLog/chainLog.

import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import type { RunBatch } from '../../src/model/runs.ts';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { MultipartZstdWriter } from '../../plugins/exporters/backend/internal/multipart_writer.ts';
import { decompressZstd } from '../../plugins/exporters/backend/internal/zstd_stream.ts';
import { defaultBatcher, defaultGenai } from './processors.ts';
import { makeRequest, payloadsOf } from './workload.ts';
import type { Payload } from './workload.ts';

const binding = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding;

const { values } = parseArgs({
  options: {
    payload: { type: 'string', default: 'all' },
    requests: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '21' },
    logs: { type: 'string', default: '14/14,13/13' },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const LEVEL = 3;
const STAGE_BYTES = 64 * 1024; // As the writer feeds its compressor.
const context = { project: 'bench', apiKey: 'bench-key' };

interface Setting {
  readonly name: string;
  readonly context: ZstdBinding.CCtx;
}
const settings: Setting[] = [{ name: 'zstd', context: newContext() }];
for (const logs of values.logs.split(',')) {
  const [hashLog, chainLog] = logs.split('/').map(Number) as [number, number];
  settings.push({ name: `${hashLog}/${chainLog}`, context: newContext(hashLog, chainLog) });
}

function newContext(hashLog?: number, chainLog?: number): ZstdBinding.CCtx {
  const context = new binding.CCtx();
  context.setParameter(binding.CParameter.compressionLevel, LEVEL);
  if (hashLog !== undefined) context.setParameter(binding.CParameter.hashLog, hashLog);
  if (chainLog !== undefined) context.setParameter(binding.CParameter.chainLog, chainLog);
  return context;
}

/** The raw multipart bodies of `requests` requests of 100 spans of `payload`, and their runs. */
async function rawBodies(payload: Payload): Promise<{ bodies: Buffer[]; runs: number }> {
  const genai = defaultGenai();
  const uploads: RunBatch[] = [];
  const batcher = defaultBatcher((batch) => void uploads.push(batch));
  for (let i = 0; i < requests; i++) {
    const spans = decodeTraceRequestProtobuf(Buffer.from(makeRequest(100, i, payload))).batch;
    await batcher.consume(genai.translate(spans, context), context);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await batcher.shutdown(Date.now() + 60_000);
  const bodies: Buffer[] = [];
  let runs = 0;
  for (const upload of uploads) {
    const writer = new MultipartZstdWriter(LEVEL);
    for (const run of upload.runs) writer.addRun(run);
    bodies.push(decompressZstd(writer.finish().body));
    runs += upload.runs.length;
  }
  return { bodies, runs };
}

const out = Buffer.allocUnsafe(binding.cStreamOutSize());
const empty = Buffer.alloc(0);

/** Compressed bytes of one body, fed in stage-sized pieces as the writer does. */
function compressedBytes(context: ZstdBinding.CCtx, body: Buffer): number {
  let bytes = 0;
  for (let offset = 0; offset < body.byteLength; offset += STAGE_BYTES) {
    let rest = body.subarray(offset, offset + STAGE_BYTES);
    while (rest.byteLength > 0) {
      const [, produced, consumed] = context.compressStream2(out, rest, binding.EndDirective.continue);
      bytes += produced;
      rest = rest.subarray(consumed);
    }
  }
  for (;;) {
    const [remaining, produced] = context.compressStream2(out, empty, binding.EndDirective.end);
    bytes += produced;
    if (remaining === 0) return bytes;
  }
}

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

console.log(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}`,
);
console.log(`zstd level ${LEVEL}, hashLog/chainLog; µs of CPU per run (median, best of ${rounds} rounds), ratio`);
for (const payload of payloadsOf(values.payload)) {
  const { bodies, runs } = await rawBodies(payload);
  let raw = 0;
  for (const body of bodies) raw += body.byteLength;
  const costs = new Map<string, number[]>(settings.map(({ name }) => [name, []]));
  const compressed = new Map<string, number>();
  for (let round = 0; round < rounds; round++) {
    // Each round starts with the next setting, so none is always first after the previous one.
    for (let i = 0; i < settings.length; i++) {
      const { name, context } = settings[(round + i) % settings.length]!;
      const started = cpuMicros();
      let bytes = 0;
      for (const body of bodies) bytes += compressedBytes(context, body);
      costs.get(name)!.push((cpuMicros() - started) / runs);
      compressed.set(name, bytes);
    }
  }
  const cells = settings.map(({ name }) => {
    const list = costs.get(name)!;
    return `${name} ${median(list).toFixed(2)} (${Math.min(...list).toFixed(2)}) ×${(raw / compressed.get(name)!).toFixed(2)}`;
  });
  console.log(
    `${payload.padEnd(14)} ${cells.join('   ')}   ${Math.round(raw / runs)} B/run, load ${loadavg()[0]!.toFixed(1)}`,
  );
}

// CPU cost of each stage of the proxy, in one process and on the same workload as proxy.ts, so the
// stages' costs can be added up and set against the end-to-end figure: OTLP/protobuf decoding,
// the `genai` translator, the `batch` processor (sizing, dotted orders, batching) and the backend
// exporter's body writer (multipart + zstd). Each stage is timed with the process's CPU time
// (garbage collection included), request by request; the script prints µs of CPU per span, the
// best and the median of the rounds. HTTP (the receiver's server, the uploads) is not included:
// the difference from proxy.ts's CPU per span is that, and the process's other work.
//
//   node --import tsx bench/pipeline/stages.ts [--payload realistic|<shape>[,<shape>…]|all] [--requests 300]
//                                              [--per-request 100] [--rounds 5] [--level 3] [--allocations]
//                                              [--encoding protobuf|json]
//
// `--encoding json` decodes OTLP/JSON requests (what OpenTelemetry JS's HTTP exporter sends) in the
// decode stage instead of OTLP/protobuf; the other stages get the same spans either way.
//
// `--payload all` (or a comma-separated list) measures each shape of workload.ts in turn and ends
// with a table of every shape's stages, median of the rounds.
//
// `--allocations` also samples every allocation (V8's sampling heap profiler, keeping the objects
// the garbage collector has already freed) and prints the bytes allocated per span, per stage and
// by the functions that allocate most: what the young generation has to absorb, and so what drives
// the collector's work and the process's peak memory.

import { Session } from 'node:inspector/promises';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { RunBatch } from '../../src/model/runs.ts';
import type { SpanBatch } from '../../src/model/spans.ts';
import { decodeTraceRequestJson } from '../../src/otlp/decode-json.ts';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { MultipartZstdWriter } from '../../plugins/exporters/backend/internal/multipart_writer.ts';
import { defaultBatcher, defaultGenai } from './processors.ts';
import { encodingOf, makeRequest, payloadsOf } from './workload.ts';
import type { Payload } from './workload.ts';

const { values } = parseArgs({
  options: {
    payload: { type: 'string', default: 'realistic' },
    requests: { type: 'string', default: '300' },
    'per-request': { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    level: { type: 'string', default: '3' },
    allocations: { type: 'boolean', default: false },
    encoding: { type: 'string', default: 'protobuf' },
  },
});
const encoding = encodingOf(values.encoding);
const payloads = payloadsOf(values.payload);
const requests = Number(values.requests);
const perRequest = Number(values['per-request']);
const rounds = Number(values.rounds);
const level = Number(values.level);
const context = { project: 'bench', apiKey: 'bench-key' };

/** CPU milliseconds of this process so far. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const stages = ['decode', 'genai', 'batch', 'encode'] as const;
type Stage = (typeof stages)[number];

const inspector = values.allocations ? new Session() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

/** µs of CPU per span of each stage, one entry per round. */
async function measure(payload: Payload): Promise<Record<Stage, number[]>> {
  const costs: Record<Stage, number[]> = { decode: [], genai: [], batch: [], encode: [] };
  for (let round = 0; round < rounds; round++) {
    const bodies = Array.from({ length: requests }, (_, i) =>
      makeRequest(perRequest, round * requests + i, payload, encoding),
    );
    // The defaults of configs/proxy.yaml, as the proxy runs them.
    const genai = defaultGenai();
    const uploads: RunBatch[] = [];
    const batcher = defaultBatcher((batch) => void uploads.push(batch));
    const spent = { decode: 0, genai: 0, batch: 0, encode: 0 };
    const encodeUploads = () => {
      for (const upload of uploads.splice(0)) {
        const writer = new MultipartZstdWriter(level);
        for (const run of upload.runs) writer.addRun(run);
        writer.finish();
      }
    };
    // One request at a time through every stage, as the proxy handles it, so that each request's
    // data dies young as it does there (timing a stage over all requests at once would charge the
    // garbage collector's work on everything still held to it).
    for (const body of bodies) {
      const t0 = cpuMs();
      const spans: SpanBatch = (encoding === 'json' ? decodeTraceRequestJson(body) : decodeTraceRequestProtobuf(body))
        .batch;
      const t1 = cpuMs();
      const runs = genai.translate(spans, context);
      const t2 = cpuMs();
      await batcher.consume(runs, context);
      await new Promise((resolve) => setImmediate(resolve)); // Lets the batcher hand over sealed batches.
      const t3 = cpuMs();
      encodeUploads();
      const t4 = cpuMs();
      spent.decode += t1 - t0;
      spent.genai += t2 - t1;
      spent.batch += t3 - t2;
      spent.encode += t4 - t3;
    }
    const t5 = cpuMs();
    await batcher.shutdown(Date.now() + 60_000);
    encodeUploads();
    spent.batch += cpuMs() - t5;
    const spans = requests * perRequest;
    for (const stage of stages) costs[stage].push((spent[stage] * 1000) / spans);
  }
  return costs;
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
const fixed = (value: number, width: number) => value.toFixed(2).padStart(width);
console.log(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}`,
);
const medians = new Map<Payload, Record<Stage, number>>();
for (const payload of payloads) {
  const costs = await measure(payload);
  console.log(
    `\n${requests} requests of ${perRequest} ${payload} spans, ${rounds} rounds, zstd level ${level}, load average ${loadavg()[0]!.toFixed(1)}; µs of CPU per span:`,
  );
  console.log('stage    best   median');
  for (const stage of stages)
    console.log(`${stage.padEnd(8)} ${fixed(Math.min(...costs[stage]), 5)}  ${fixed(median(costs[stage]), 6)}`);
  const best = stages.reduce((sum, stage) => sum + Math.min(...costs[stage]), 0);
  console.log(`sum      ${fixed(best, 5)}  (${Math.round(1e6 / best)} spans/s per core, without HTTP)`);
  medians.set(
    payload,
    Object.fromEntries(stages.map((stage) => [stage, median(costs[stage])])) as Record<Stage, number>,
  );
}
if (payloads.length > 1) {
  console.log(`\nmedian of ${rounds} rounds, µs of CPU per span:`);
  console.log(`${'payload'.padEnd(14)}${stages.map((stage) => stage.padStart(8)).join('')}     sum`);
  for (const [payload, cost] of medians) {
    const sum = stages.reduce((total, stage) => total + cost[stage], 0);
    console.log(`${payload.padEnd(14)}${stages.map((stage) => fixed(cost[stage], 8)).join('')}${fixed(sum, 8)}`);
  }
}

if (inspector)
  printAllocations(await inspector.post('HeapProfiler.stopSampling'), payloads.length * rounds * requests * perRequest);

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes allocated per span: by stage (the first stage entry point on the stack) and by function. */
function printAllocations({ profile }: { profile: { head: SamplingNode } }, spans: number): void {
  const entryPoints = new Map([
    ['makeRequest', 'workload'], // the benchmark's own request bodies, not the proxy's
    ['decodeTraceRequestProtobuf', 'decode'],
    ['decodeTraceRequestJson', 'decode'],
    ['translate', 'genai'],
    ['consume', 'batch'],
    ['addRun', 'encode'],
    ['finish', 'encode'],
  ]);
  const byStage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: SamplingNode, stage: string) => {
    const frame = node.callFrame;
    const here = stage === 'other' ? (entryPoints.get(frame.functionName) ?? stage) : stage;
    if (node.selfSize > 0) {
      total += node.selfSize;
      byStage.set(here, (byStage.get(here) ?? 0) + node.selfSize);
      const file = frame.url.slice(frame.url.lastIndexOf('/') + 1);
      const name = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) visit(child, here);
  };
  visit(profile.head, 'other');
  const perSpan = (bytes: number) => `${(bytes / spans).toFixed(0).padStart(7)} B`;
  console.log(`\nallocated per span (sampled, freed objects included): ${perSpan(total)}`);
  for (const [stage, bytes] of [...byStage].sort((a, b) => b[1] - a[1]))
    console.log(`  ${stage.padEnd(8)} ${perSpan(bytes)}`);
  console.log('by function (self):');
  for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`  ${perSpan(bytes)}  ${name}`);
}

// Two checkouts' output stages alternated in one process: `genai` → `batch` → the backend
// exporter's body writer of this checkout and of another (`--base DIR`, e.g. a `git worktree` of an
// earlier commit, built, with a `node_modules` whose `tracepipe` entry points at that worktree), on
// the same decoded requests, round after round with the order swapped each round. Prints µs of CPU
// per span of each side (medians of the rounds) and the median of each round's change ÷ base, and
// checks that both sides write the same upload bodies, byte for byte (raw multipart, one fixed
// boundary). Running it with `--base` a second copy of this checkout measures the harness's own
// bias (an A/A), which on a loaded two-core machine is a few per cent.
//
//   node --import tsx bench/pipeline/ab.ts --base DIR [--payload all|<shape>[,<shape>…]] [--requests 30]
//                                          [--rounds 31] [--stage all|genai|out]
//
// `--stage genai` times the translator alone, `out` the batch processor and the writer, `all` both.

import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeRequest, payloadsOf } from './workload.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    payload: { type: 'string', default: 'all' },
    requests: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '31' },
    stage: { type: 'string', default: 'all' },
  },
});
if (!values.base) throw new Error('--base DIR (another checkout, built) is required');
const stage = values.stage;
if (stage !== 'all' && stage !== 'genai' && stage !== 'out') throw new Error('--stage must be all, genai or out');
const payloads = payloadsOf(values.payload);
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const context = { project: 'bench', apiKey: 'bench-key' };
const PER_REQUEST = 100;

interface Pipeline {
  decode(body: Buffer): { batch: unknown };
  defaultGenai(): { translate(batch: unknown, context: object): { runs: unknown[] } };
  defaultBatcher(sent: (batch: { runs: unknown[] }) => void): {
    consume(batch: unknown, context: object): Promise<void>;
    shutdown(deadline: number): Promise<void>;
  };
  Writer: new (level: number, boundary: string) => { addRun(run: unknown): void; finish(): { body: Buffer } };
  decompress(body: Buffer): Buffer;
}

/** A checkout's stages, each module loaded from that checkout (and its own `dist`, through `tracepipe`). */
async function pipelineOf(root: string): Promise<Pipeline> {
  const processors = await import(`${root}/bench/pipeline/processors.ts`);
  return {
    decode: (await import(`${root}/src/otlp/decode-protobuf.ts`)).decodeTraceRequestProtobuf,
    defaultGenai: processors.defaultGenai,
    defaultBatcher: processors.defaultBatcher,
    Writer: (await import(`${root}/plugins/exporters/backend/internal/multipart_writer.ts`)).MultipartZstdWriter,
    decompress: (await import(`${root}/plugins/exporters/backend/internal/zstd_stream.ts`)).decompressZstd,
  };
}

const sides = {
  base: await pipelineOf(resolve(values.base)),
  change: await pipelineOf(resolve(import.meta.dirname, '../..')),
};
type Side = keyof typeof sides;

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** µs of CPU per span of the timed stages; the raw bodies written, when `bodies` is given. */
async function run(side: Side, requestBodies: readonly Buffer[], bodies?: Buffer[]): Promise<number> {
  const pipeline = sides[side];
  // Decoded before the clock starts, and anew for each run: the runs keep the spans' strings.
  const batches = requestBodies.map((body) => pipeline.decode(body).batch);
  const genai = pipeline.defaultGenai();
  const uploads: { runs: unknown[] }[] = [];
  const batcher = pipeline.defaultBatcher((batch) => void uploads.push(batch));
  const write = () => {
    for (const upload of uploads.splice(0)) {
      const writer = new pipeline.Writer(3, 'bench-boundary');
      for (const run of upload.runs) writer.addRun(run);
      const { body } = writer.finish();
      bodies?.push(pipeline.decompress(body));
    }
  };
  let spent = 0;
  for (const batch of batches) {
    const t0 = cpuMicros();
    const runs = genai.translate(batch, context);
    const t1 = cpuMicros();
    await batcher.consume(runs, context);
    await new Promise((resolve) => setImmediate(resolve)); // Lets the batcher hand over sealed batches.
    write();
    const t2 = cpuMicros();
    spent += stage === 'genai' ? t1 - t0 : stage === 'out' ? t2 - t1 : t2 - t0;
  }
  const t3 = cpuMicros();
  await batcher.shutdown(Date.now() + 60_000);
  write();
  if (stage !== 'genai') spent += cpuMicros() - t3;
  return spent / (requestBodies.length * PER_REQUEST);
}

const median = (list: readonly number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
console.log(
  `stage ${stage}, ${requests} requests of ${PER_REQUEST} spans, ${rounds} rounds, load ${loadavg()[0]!.toFixed(1)}`,
);
for (const payload of payloads) {
  const requestBodies = Array.from({ length: requests }, (_, i) => Buffer.from(makeRequest(PER_REQUEST, i, payload)));
  const written: Record<Side, Buffer[]> = { base: [], change: [] };
  await run('base', requestBodies, written.base);
  await run('change', requestBodies, written.change);
  const same =
    written.base.length === written.change.length && written.base.every((body, i) => body.equals(written.change[i]!));
  const costs: Record<Side, number[]> = { base: [], change: [] };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['base', 'change'] : ['change', 'base'];
    const cost = { base: 0, change: 0 };
    for (const side of order) cost[side] = await run(side, requestBodies);
    costs.base.push(cost.base);
    costs.change.push(cost.change);
    ratios.push(cost.change / cost.base);
  }
  const bytes = written.base.reduce((sum, body) => sum + body.length, 0);
  console.log(
    `${payload.padEnd(14)} base ${median(costs.base).toFixed(2)}  change ${median(costs.change).toFixed(2)} µs/span` +
      `  paired ${((median(ratios) - 1) * 100).toFixed(1)} %  bodies ${same ? 'identical' : 'DIFFER'}` +
      ` (${written.base.length} bodies, ${bytes} bytes raw)  load ${loadavg()[0]!.toFixed(1)}`,
  );
  if (!same) process.exitCode = 1;
}

// Benchmark of the backend exporter's body writer alone: runs → multipart → zstd, per compression
// level. Prints MB/s of raw multipart written, runs/s, µs of CPU per run (the process's user +
// system time) and the compression ratio, on runs shaped like the proxy's (an agent root, two LLM
// calls and a tool call per trace).
//
//   node --import tsx bench/pipeline/encode.ts

import { cpus } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Run } from '../../src/model/runs.ts';
import { MultipartZstdWriter } from '../../plugins/exporters/backend/internal/multipart_writer.ts';
import { makeRun } from '../../src/testkit/runs.ts';

function runs(count: number): Run[] {
  return Array.from({ length: count }, (_, i) =>
    makeRun({
      id: randomUUID(),
      name: i % 4 === 0 ? 'agent' : i % 4 === 2 ? 'search_reports' : 'chat gpt-4o-mini',
      inputs: {
        messages: [
          {
            role: 'user',
            content: `Request ${i}: summarise the quarterly report for the sales team in three bullet points.`,
          },
        ],
      },
      outputs: { generations: [{ text: `- Revenue grew 12%.\n- Churn fell to 3%.\n- Pipeline is ${i % 97} deals.` }] },
    }),
  );
}

const batches = Array.from({ length: 200 }, () => runs(100));
console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model}), node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
);
console.log('level  runs/s     raw MB/s  CPU µs/run  ratio');
for (const level of [1, 3, 5]) {
  // One untimed pass for the JIT.
  for (const batch of batches.slice(0, 20)) {
    const writer = new MultipartZstdWriter(level);
    for (const run of batch) writer.addRun(run);
    writer.finish();
  }
  let raw = 0;
  let compressed = 0;
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  for (const batch of batches) {
    const writer = new MultipartZstdWriter(level);
    for (const run of batch) writer.addRun(run);
    const encoded = writer.finish();
    raw += encoded.rawBytes;
    compressed += encoded.body.byteLength;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const count = batches.length * 100;
  console.log(
    `${String(level).padEnd(6)} ${String(Math.round(count / seconds)).padEnd(10)} ${(raw / 1e6 / seconds).toFixed(0).padEnd(9)} ${((cpu.user + cpu.system) / count).toFixed(2).padEnd(11)} ${(raw / compressed).toFixed(1)}`,
  );
}

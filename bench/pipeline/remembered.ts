// What the `batch` processor remembers for late children on the proxy's workloads: the dotted
// orders and root aliases (with their hash tables) that `max_remembered_bytes` bounds, in bytes per
// run, after a shape's requests went through `genai` and `batch` as the proxy runs them (the bound
// lifted, so that nothing is forgotten), and how many runs the default bound then holds. Unlike an
// end-to-end peak, the figures do not depend on how busy the machine is.
//
//   node --import tsx bench/pipeline/remembered.ts [--payload held-out|<shape>[,<shape>…]|all] [--requests 1000]

import { parseArgs } from 'node:util';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { configSchema } from '../../plugins/processors/batch/config.ts';
import { defaultBatcher, defaultGenai } from './processors.ts';
import { makeRequest, payloadsOf } from './workload.ts';

const { values } = parseArgs({
  options: {
    payload: { type: 'string', default: 'held-out' },
    requests: { type: 'string', default: '1000' },
  },
});
const requests = Number(values.requests);
const context = { project: 'bench', apiKey: 'bench-key' };
const defaultBound = configSchema.properties.max_remembered_bytes.default;

interface Remembering {
  readonly known: { readonly heldBytes: number };
  readonly aliases: { readonly heldBytes: number };
}

console.log(
  `| payload | runs | orders, bytes/run | root aliases, bytes/run | together | runs in ${defaultBound} bytes |`,
);
console.log('|---|--:|--:|--:|--:|--:|');
for (const payload of payloadsOf(values.payload)) {
  const genai = defaultGenai();
  // Bounds far above the load's runs, so that every run stays remembered and is counted.
  const batcher = defaultBatcher(undefined, { max_remembered_runs: 10_000_000, max_remembered_bytes: 2 ** 31 });
  let runs = 0;
  for (let request = 0; request < requests; request++) {
    const body = Buffer.from(makeRequest(100, request, payload));
    const batch = genai.translate(decodeTraceRequestProtobuf(body).batch, context);
    runs += batch.runs.length;
    await batcher.consume(batch, context);
  }
  // The memories are private: read for this measurement only.
  const tree = (batcher as unknown as { tree: Remembering }).tree;
  const orders = tree.known.heldBytes / runs;
  const aliases = tree.aliases.heldBytes / runs;
  console.log(
    `| ${payload} | ${runs} | ${orders.toFixed(1)} | ${aliases.toFixed(1)} | ${(orders + aliases).toFixed(1)} | ${Math.round(defaultBound / (orders + aliases))} |`,
  );
  await batcher.shutdown(Date.now() + 10_000);
}

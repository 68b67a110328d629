// What the `batch` processor remembers for late children on the proxy's workloads: the dotted
// orders and root aliases (with their hash tables) that `max_remembered_bytes` bounds, in bytes per
// run, after a shape's requests went through `genai` and `batch` as the proxy runs them (the bound
// lifted, so that nothing is forgotten), and how many runs the default bound then holds. Unlike an
// end-to-end peak, the figures do not depend on how busy the machine is.
//
//   node --import tsx bench/pipeline/remembered.ts [--payload held-out|<shape>[,<shape>…]|all] [--requests 1000]

import { parseArgs } from 'node:util';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { nopSettings } from '../../src/pipeline/testing.ts';
import { BatchProcessor } from '../../plugins/processors/batch/batcher.ts';
import { configSchema } from '../../plugins/processors/batch/config.ts';
import { GenAiProcessor } from '../../plugins/processors/genai/processor.ts';
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
  const genai = new GenAiProcessor(
    nopSettings('processor', 'genai'),
    { filter_non_genai: false, generic_otel: false, root_cache_ttl_ms: 300_000, root_cache_max_entries: 100_000 },
    { mutatesData: false, consume: async () => {} },
  );
  const batcher = new BatchProcessor(
    nopSettings('processor', 'batch'),
    {
      batch_size: 100,
      flush_interval_ms: 1000,
      max_buffer_bytes: 10_485_760,
      max_held_runs: 100_000,
      max_held_bytes: 268_435_456,
      max_backlog_runs: 10_000,
      orphan_timeout_ms: 30_000,
      orphan_policy: 'attach_to_root',
      dotted_order_ttl_ms: 300_000,
      max_remembered_runs: 10_000_000,
      max_remembered_bytes: 2 ** 31,
    },
    { mutatesData: false, consume: async () => {} },
  );
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

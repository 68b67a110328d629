// Decoder benchmark: the hand-written protobuf decoder against protobufjs (+ conversion to the
// model), and the JSON decoder, on one 100-span request. Prints requests/s, spans/s and MB/s.
//
//   node --import tsx bench/ingest/decode.ts [--document none|german|chinese]
//
// `--document` adds a retrieved document of ~8 KB in that language to every span's prompt.

import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { decodeTraceRequestJson } from '../../src/otlp/decode-json.ts';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { decodeWithProtobufjs } from './protobufjs-decoder.ts';
import { sampleBodies } from './sample.ts';
import type { DocumentLanguage } from './sample.ts';

const SPANS = 100;
const { values } = parseArgs({ options: { document: { type: 'string', default: 'none' } } });
if (!['none', 'german', 'chinese'].includes(values.document)) throw new Error('--document is none, german or chinese');
const { protobuf, json } = sampleBodies(SPANS, values.document as DocumentLanguage);

// Both protobuf decoders must agree before their speed means anything.
assert.deepEqual(decodeWithProtobufjs(protobuf), decodeTraceRequestProtobuf(protobuf).batch);
assert.deepEqual(decodeTraceRequestJson(json).batch, decodeTraceRequestProtobuf(protobuf).batch);

interface Candidate {
  readonly name: string;
  readonly bytes: number;
  readonly run: () => unknown;
  best: number;
}

/** Runs one ~1 s round of a candidate and keeps its best rate (req/s). */
function round(candidate: Candidate): void {
  let count = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < 1_000_000_000n) {
    for (let i = 0; i < 50; i++) candidate.run();
    count += 50;
    elapsed = process.hrtime.bigint() - start;
  }
  candidate.best = Math.max(candidate.best, (count * 1e9) / Number(elapsed));
}

const candidates: Candidate[] = [
  {
    name: 'protobuf, hand-written decoder',
    bytes: protobuf.length,
    run: () => decodeTraceRequestProtobuf(protobuf),
    best: 0,
  },
  {
    name: 'protobuf, protobufjs + conversion',
    bytes: protobuf.length,
    run: () => decodeWithProtobufjs(protobuf),
    best: 0,
  },
  { name: 'JSON, JSON.parse + decoder', bytes: json.length, run: () => decodeTraceRequestJson(json), best: 0 },
];

console.log(
  `request: ${SPANS} spans, documents: ${values.document}, protobuf ${protobuf.length} bytes, JSON ${json.length} bytes; node ${process.version}`,
);
for (const candidate of candidates) for (let i = 0; i < 2000; i++) candidate.run(); // warm-up
// Rounds alternate between candidates so that a noisy neighbour slows them all alike; best of 7.
for (let i = 0; i < 7; i++) for (const candidate of candidates) round(candidate);
for (const { name, bytes, best } of candidates) {
  console.log(
    `${name.padEnd(34)} ${best.toFixed(0).padStart(7)} req/s  ${((best * SPANS) / 1e6).toFixed(2).padStart(6)} M spans/s  ${((best * bytes) / 1e6).toFixed(0).padStart(5)} MB/s`,
  );
}
console.log(`hand-written / protobufjs: ${(candidates[0]!.best / candidates[1]!.best).toFixed(2)}x`);

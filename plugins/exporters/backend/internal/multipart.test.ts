import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decompress } from 'zstd-napi';
import type { Run } from 'tracepipe/plugin';
import { attachRunJson, runJson, shareJson } from 'tracepipe/plugin';
import { makeRun } from 'tracepipe/testing';
import { MultipartFormatError, boundaryOf, parseMultipart, runsFromParts } from './multipart_reader.ts';
import {
  BOUNDARY_PREFIX,
  MultipartZstdWriter,
  UnencodableRunError,
  multipartContentType,
  newBoundary,
} from './multipart_writer.ts';

function encode(runs: Run[], level = 3) {
  const writer = new MultipartZstdWriter(level);
  for (const run of runs) writer.addRun(run);
  return writer.finish();
}

function roundTrip(runs: Run[]): Run[] {
  const encoded = encode(runs);
  return runsFromParts(parseMultipart(decompress(encoded.body), encoded.boundary));
}

const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);

describe('multipart body', () => {
  it('gives every body a boundary of its own, also past a block of random bits (64 boundaries)', () => {
    const boundaries = Array.from({ length: 200 }, () => newBoundary());
    for (const boundary of boundaries) assert.match(boundary, /^----LangSmithFormBoundary-[0-9a-z]{1,13}$/);
    assert.equal(new Set(boundaries).size, boundaries.length);
  });

  it('has the reference layout: named parts, JSON content type, Content-Length, closing boundary', () => {
    const run = makeRun({ id: '00000000-0000-0000-0000-000000000001' });
    const encoded = encode([run]);
    const text = decompress(encoded.body).toString('utf8');
    assert.ok(encoded.boundary.startsWith(BOUNDARY_PREFIX));
    // The post part is the run without inputs and outputs, `extra` written last.
    const post = JSON.stringify((({ inputs: _i, outputs: _o, extra, ...rest }) => ({ ...rest, extra }))(run));
    const inputs = JSON.stringify(run.inputs);
    const outputs = JSON.stringify(run.outputs);
    const part = (name: string, json: string) =>
      `--${encoded.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}\r\n`;
    assert.equal(
      text,
      part(`post.${run.id}`, post) +
        part(`post.${run.id}.inputs`, inputs) +
        part(`post.${run.id}.outputs`, outputs) +
        `--${encoded.boundary}--\r\n`,
    );
    assert.equal(encoded.rawBytes, Buffer.byteLength(text));
    assert.equal(boundaryOf(multipartContentType(encoded.boundary)), encoded.boundary);
  });

  it('writes the values runs share as they are, from their recorded text', () => {
    const resource = shareJson({ 'service.name': 'sales-assistant' });
    const tools = shareJson([{ name: 'search', parameters: { type: 'object' } }]);
    const runs = [1, 2].map((n) =>
      makeRun({
        id: `00000000-0000-0000-0000-00000000000${n}`,
        extra: { metadata: { n }, invocation_params: { model: 'gpt-4o-mini', tools }, resource },
      }),
    );
    const encoded = encode(runs);
    const posts = parseMultipart(decompress(encoded.body), encoded.boundary).filter((p) =>
      /^post\.[^.]+$/.test(p.name),
    );
    assert.deepEqual(
      posts.map((p) => JSON.parse(p.body.toString()) as unknown),
      runs.map(({ inputs: _i, outputs: _o, ...rest }) => rest),
    );
  });

  it('strips inputs and outputs from the post part and omits absent ones', () => {
    const run = makeRun();
    delete run.outputs;
    const encoded = encode([run]);
    const parts = parseMultipart(decompress(encoded.body), encoded.boundary);
    assert.deepEqual(
      parts.map((p) => p.name),
      [`post.${run.id}`, `post.${run.id}.inputs`],
    );
    assert.equal('inputs' in JSON.parse(parts[0]!.body.toString()), false);
  });

  it("copies the JSON text a run carries (the batch processor's) instead of serialising it again", () => {
    const run = makeRun({ id: '00000000-0000-0000-0000-000000000001' });
    const json = runJson(run);
    // Text that differs from the run shows which one was written.
    attachRunJson(run, { ...json, main: [json.main.join('').replace(run.name, 'from-text')] });
    const [written] = roundTrip([run]);
    assert.equal(written!.name, 'from-text');
    // A copy of the run is not the run the text was made for: it is serialised.
    const [copy] = roundTrip([{ ...run }]);
    assert.equal(copy!.name, run.name);
  });

  it('round-trips any runs (property)', () => {
    const runArbitrary = fc.record({
      name: fc.string(),
      inputs: fc.option(fc.dictionary(fc.string(), jsonValue), { nil: undefined }),
      outputs: fc.option(fc.dictionary(fc.string(), jsonValue), { nil: undefined }),
      tags: fc.array(fc.string()),
      extra: fc.dictionary(fc.string(), jsonValue),
    });
    fc.assert(
      fc.property(fc.array(runArbitrary, { maxLength: 8 }), fc.integer({ min: 1, max: 9 }), (shapes, level) => {
        const runs = shapes.map((shape) => {
          const run = makeRun({ name: shape.name, tags: shape.tags, extra: shape.extra });
          delete run.inputs;
          delete run.outputs;
          if (shape.inputs) run.inputs = shape.inputs;
          if (shape.outputs) run.outputs = shape.outputs;
          return run;
        });
        const encoded = encode(runs, level);
        const decoded = runsFromParts(parseMultipart(decompress(encoded.body), encoded.boundary));
        assert.deepEqual(decoded, JSON.parse(JSON.stringify(runs)));
        assert.equal(encoded.runs, runs.length);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a run that cannot be encoded, whole, and keeps the body valid', () => {
    const writer = new MultipartZstdWriter(3);
    const good = makeRun();
    const cyclic = makeRun() as Run & { extra: Record<string, unknown> };
    cyclic.extra.self = cyclic.extra;
    const bigint = makeRun({ outputs: { n: 1n as unknown } });
    writer.addRun(good);
    assert.throws(() => writer.addRun(cyclic), UnencodableRunError);
    assert.throws(() => writer.addRun(bigint), UnencodableRunError);
    assert.throws(() => writer.addRun(makeRun({ id: 'a"b' })), UnencodableRunError);
    const encoded = writer.finish();
    assert.equal(encoded.runs, 1);
    assert.deepEqual(
      runsFromParts(parseMultipart(decompress(encoded.body), encoded.boundary)).map((r) => r.id),
      [good.id],
    );
  });

  it('writes any Unicode text, and values larger than its 64 KiB staging buffer, byte-exactly (property)', () => {
    // Text is encoded straight into the compressor's staging buffer with a precomputed UTF-8
    // length: multi-byte characters, lone surrogates and values that do not fit the stage must
    // still give exact Content-Length headers and raw byte counts.
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 64 }),
      fc.string({ unit: 'binary', minLength: 20_000, maxLength: 40_000 }),
      fc.constantFrom('\ud800', 'a\udfffb', '😀'.repeat(20_000), 'é'.repeat(70_000)),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 4 }), ([...texts]) => {
        const runs = texts.map(([input, output]) =>
          makeRun({ name: output.slice(0, 10), inputs: { input }, outputs: { output } }),
        );
        const encoded = encode(runs);
        const raw = decompress(encoded.body);
        assert.equal(encoded.rawBytes, raw.byteLength);
        assert.deepEqual(runsFromParts(parseMultipart(raw, encoded.boundary)), JSON.parse(JSON.stringify(runs)));
      }),
      { numRuns: 60 },
    );
  });
});

describe('multipart reader rejects malformed bodies', () => {
  const boundary = 'b';
  const cases: [string, string][] = [
    ['no boundary', 'hello'],
    [
      'no closing',
      '--b\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}\r\n',
    ],
    [
      'missing length',
      '--b\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\n\r\n{}\r\n--b--\r\n',
    ],
    [
      'wrong length',
      '--b\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n{}\r\n--b--\r\n',
    ],
    [
      'missing type',
      '--b\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Length: 2\r\n\r\n{}\r\n--b--\r\n',
    ],
    ['missing name', '--b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}\r\n--b--\r\n'],
    [
      'truncated',
      '--b\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{}',
    ],
    ['trailing bytes', '--b--\r\nextra'],
  ];
  for (const [label, body] of cases) {
    it(label, () => assert.throws(() => parseMultipart(Buffer.from(body), boundary), MultipartFormatError));
  }

  it('rejects runs assembled from bad parts', () => {
    const part = (name: string, json: string, type = 'application/json') => ({
      name,
      contentType: type,
      body: Buffer.from(json),
    });
    assert.throws(() => runsFromParts([part('feedback.x', '{}')]), MultipartFormatError);
    assert.throws(() => runsFromParts([part('patch.x.inputs', '{}')]), MultipartFormatError);
    // An update of a run (Run.update) is read back as one.
    assert.deepEqual(runsFromParts([part('post.x', '{"id":"x"}'), part('patch.x', '{"id":"x"}')]), [
      { id: 'x' },
      { id: 'x', update: true },
    ]);
    assert.throws(() => runsFromParts([part('post.x.inputs', '{}')]), MultipartFormatError);
    assert.throws(() => runsFromParts([part('post.x', '{')]), MultipartFormatError);
    assert.throws(() => runsFromParts([part('post.x', '{}', 'text/plain')]), MultipartFormatError);
    assert.throws(() => runsFromParts([part('post.x', '{}'), part('post.x', '{}')]), MultipartFormatError);
    assert.throws(() => boundaryOf('application/json'), MultipartFormatError);
  });
});

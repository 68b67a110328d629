// The example redact processor: conformance and behaviour, on tracepipe's public test kit.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { SpanBatch } from 'tracepipe/plugin';
import { Sink, configFor, makeBatch, nopSettings, plainSpan, runComponentConformance } from 'tracepipe/testing';
import type { RedactConfig } from './index.ts';
import factory from './index.ts';

function batch(
  attributes: SpanBatch['resourceSpans'][number]['scopeSpans'][number]['spans'][number]['attributes'],
): SpanBatch {
  const span = plainSpan({
    spanId: '1111111111111111',
    name: 'chat',
    startTimeUnixNano: 1n,
    endTimeUnixNano: 2n,
    attributes,
    events: [{ timeUnixNano: 1n, name: 'gen_ai.user.message', attributes, droppedAttributesCount: 0 }],
  });
  return makeBatch([span], { scope: { name: 's' } });
}

function configOf(partial: Partial<RedactConfig>): RedactConfig {
  return configFor<RedactConfig>(factory, partial);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

runComponentConformance(factory, {
  testdataDir: fileURLToPath(new URL('./testdata', import.meta.url)),
  sample: () => batch([{ key: 'k', value: { type: 'string', value: 'v' } }]),
});

describe('redact processor', () => {
  it('redacts matches inside strings, nested arrays and kvlists, keyed values and event attributes', async () => {
    const sink = new Sink<'spans'>();
    const processor = factory.create(
      nopSettings('processor'),
      configOf({ patterns: ['sk-[a-z0-9]+', '[\\w.]+@example\\.com'], keys: ['user.id'] }),
      sink,
    );
    const input = batch([
      { key: 'prompt', value: { type: 'string', value: 'use sk-abc123 and mail bob@example.com' } },
      { key: 'user.id', value: { type: 'int', value: 42n } },
      {
        key: 'list',
        value: {
          type: 'array',
          value: [
            { type: 'string', value: 'sk-zz9' },
            { type: 'bool', value: true },
          ],
        },
      },
      { key: 'map', value: { type: 'kvlist', value: [{ key: 'inner', value: { type: 'string', value: 'x sk-q1' } }] } },
      { key: 'count', value: { type: 'int', value: 7n } },
    ]);
    await processor.consume(input, { project: 'p' });
    const span = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    const expected = [
      { key: 'prompt', value: { type: 'string', value: 'use [REDACTED] and mail [REDACTED]' } },
      { key: 'user.id', value: { type: 'string', value: '[REDACTED]' } },
      {
        key: 'list',
        value: {
          type: 'array',
          value: [
            { type: 'string', value: '[REDACTED]' },
            { type: 'bool', value: true },
          ],
        },
      },
      {
        key: 'map',
        value: { type: 'kvlist', value: [{ key: 'inner', value: { type: 'string', value: 'x [REDACTED]' } }] },
      },
      { key: 'count', value: { type: 'int', value: 7n } },
    ];
    assert.deepEqual(span.attributes, expected);
    assert.deepEqual(span.events[0]!.attributes, expected);
    assert.equal(sink.batches[0]!.context.project, 'p');
  });

  it('leaves event attributes alone when include_events is false', async () => {
    const sink = new Sink<'spans'>();
    const processor = factory.create(
      nopSettings('processor'),
      configOf({ patterns: ['secret'], include_events: false }),
      sink,
    );
    await processor.consume(batch([{ key: 'a', value: { type: 'string', value: 'secret' } }]), { project: 'p' });
    const span = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    assert.deepEqual(span.attributes[0]!.value, { type: 'string', value: '[REDACTED]' });
    assert.deepEqual(span.events[0]!.attributes[0]!.value, { type: 'string', value: 'secret' });
  });

  it('never writes to the batch it is given, and so declares mutatesData = false', async () => {
    const sink = new Sink<'spans'>();
    const processor = factory.create(
      nopSettings('processor'),
      configOf({ patterns: ['secret'], keys: ['user'] }),
      sink,
    );
    assert.equal(processor.mutatesData, false);
    const input = batch([
      { key: 'a', value: { type: 'string', value: 'a secret' } },
      { key: 'user', value: { type: 'string', value: 'alice' } },
      { key: 'list', value: { type: 'array', value: [{ type: 'string', value: 'secret' }] } },
    ]);
    const before = structuredClone(input);
    // Frozen: any write to the input throws (test files are modules, hence strict mode).
    await processor.consume(deepFreeze(input), { project: 'p' });
    assert.deepEqual(input, before);
    const output = sink.batches[0]!.data;
    assert.notEqual(output, input);
    assert.deepEqual(output.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes[0]!.value, {
      type: 'string',
      value: 'a [REDACTED]',
    });
    // What needs no change is shared, not copied.
    assert.equal(output.resourceSpans[0]!.resource, input.resourceSpans[0]!.resource);
  });
});

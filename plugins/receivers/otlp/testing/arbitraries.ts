// fast-check generators for this plugin's property tests: model batches (for encoder/decoder round
// trips) and SDK ReadableSpan look-alikes (for round trips through the OpenTelemetry reference
// serializers), with the batch each of the latter must decode to.

import fc from 'fast-check';
import type { AnyValue, Attribute, ResourceSpans, ScopeSpans, Span, SpanBatch } from 'tracepipe/plugin';

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
const uint32 = fc.nat({ max: 0xffffffff });
const small = fc.nat({ max: 1000 });
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const nanos = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });

const anyValue: fc.Arbitrary<AnyValue> = fc.letrec<{ value: AnyValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text.map((value) => ({ type: 'string' as const, value })),
    fc.boolean().map((value) => ({ type: 'bool' as const, value })),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({ type: 'int' as const, value })),
    fc.double().map((value) => ({ type: 'double' as const, value })),
    fc.uint8Array({ maxLength: 8 }).map((value) => ({ type: 'bytes' as const, value })),
    fc.constant({ type: 'empty' as const }),
    fc.array(tie('value'), { maxLength: 3 }).map((value) => ({ type: 'array' as const, value })),
    fc
      .array(fc.record({ key: text, value: tie('value') }), { maxLength: 3 })
      .map((value) => ({ type: 'kvlist' as const, value })),
  ),
})).value;

const attributes: fc.Arbitrary<Attribute[]> = fc.array(fc.record({ key: text, value: anyValue }), { maxLength: 4 });

const span: fc.Arbitrary<Span> = fc.record({
  traceId: hex(16),
  spanId: hex(8),
  parentSpanId: fc.oneof(fc.constant(''), hex(8)),
  traceState: text,
  flags: uint32,
  name: text,
  kind: fc.nat({ max: 5 }),
  startTimeUnixNano: nanos,
  endTimeUnixNano: nanos,
  attributes,
  droppedAttributesCount: small,
  events: fc.array(fc.record({ timeUnixNano: nanos, name: text, attributes, droppedAttributesCount: small }), {
    maxLength: 2,
  }),
  droppedEventsCount: small,
  links: fc.array(
    fc.record({
      traceId: hex(16),
      spanId: hex(8),
      traceState: text,
      attributes,
      droppedAttributesCount: small,
      flags: uint32,
    }),
    { maxLength: 2 },
  ),
  droppedLinksCount: small,
  status: fc.record({ code: fc.nat({ max: 2 }), message: text }),
});

const scopeSpans: fc.Arbitrary<ScopeSpans> = fc.record({
  scope: fc.record({ name: text, version: text, attributes, droppedAttributesCount: small }),
  schemaUrl: text,
  spans: fc.array(span, { minLength: 1, maxLength: 3 }),
});

const resourceSpans: fc.Arbitrary<ResourceSpans> = fc.record({
  resource: fc.record({ attributes, droppedAttributesCount: small }),
  schemaUrl: text,
  scopeSpans: fc.array(scopeSpans, { minLength: 1, maxLength: 2 }),
});

/** Any model batch whose resources and scopes all hold spans (as the decoders produce). */
export const spanBatch: fc.Arbitrary<SpanBatch> = fc
  .record({ resourceSpans: fc.array(resourceSpans, { maxLength: 2 }) })
  // fast-check may build null-prototype records; decoders build plain objects.
  .map((batch) => structuredClone(batch));

// --- SDK-shaped spans ---

/** The attribute values the OpenTelemetry JS API can hold, plus what its serializer also handles. */
type SdkValue = string | number | boolean | Uint8Array | SdkValue[] | { [key: string]: SdkValue };

const sdkValue: fc.Arbitrary<SdkValue> = fc.letrec<{ value: SdkValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.boolean(),
    fc.maxSafeInteger(),
    // The JSON serializer writes non-finite doubles as `null`, so only finite ones survive both.
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.uint8Array({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;

const sdkAttributes = fc.dictionary(text, sdkValue, { maxKeys: 4 });
const hrTime = fc.tuple(fc.nat({ max: 2 ** 32 }), fc.nat({ max: 999_999_999 }));

export interface SdkLikeSpan {
  spanContext(): {
    traceId: string;
    spanId: string;
    traceFlags: number;
    traceState?: { serialize(): string };
    isRemote?: boolean;
  };
  parentSpanContext?: { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean };
  name: string;
  kind: number;
  startTime: [number, number];
  endTime: [number, number];
  attributes: Record<string, SdkValue>;
  droppedAttributesCount: number;
  events: {
    name: string;
    time: [number, number];
    attributes: Record<string, SdkValue>;
    droppedAttributesCount: number;
  }[];
  droppedEventsCount: number;
  status: { code: number; message?: string };
  links: {
    context: {
      traceId: string;
      spanId: string;
      traceFlags: number;
      traceState?: { serialize(): string };
      isRemote?: boolean;
    };
    attributes: Record<string, SdkValue>;
    droppedAttributesCount: number;
  }[];
  droppedLinksCount: number;
  resource: { attributes: Record<string, SdkValue>; schemaUrl?: string };
  instrumentationScope: { name: string; version?: string; schemaUrl?: string };
}

const traceState = fc.option(fc.constantFrom('a=1', 'vendor=x,other=y'), { nil: undefined });

/** Spans shaped like the SDK's ReadableSpan, sharing 1–2 resources and scopes. */
export const sdkSpans: fc.Arbitrary<SdkLikeSpan[]> = fc
  .record({
    resources: fc.array(fc.record({ attributes: sdkAttributes, schemaUrl: fc.option(text, { nil: undefined }) }), {
      minLength: 1,
      maxLength: 2,
    }),
    // Distinct by name and version: the reference protobuf serializer groups spans by scope object
    // and the JSON one by name and version, so two equal scopes would make them disagree.
    scopes: fc.uniqueArray(fc.record({ name: text, version: fc.option(text, { nil: undefined }) }), {
      minLength: 1,
      maxLength: 2,
      selector: (scope) => `${scope.name}@${scope.version ?? ''}`,
    }),
    spans: fc.array(
      fc.record({
        resource: fc.nat(),
        scope: fc.nat(),
        traceId: hex(16),
        spanId: hex(8),
        traceFlags: fc.nat({ max: 255 }),
        traceState,
        parent: fc.option(fc.record({ spanId: hex(8), isRemote: fc.boolean() }), { nil: undefined }),
        name: text,
        kind: fc.nat({ max: 4 }),
        startTime: hrTime,
        endTime: hrTime,
        attributes: sdkAttributes,
        droppedAttributesCount: small,
        events: fc.array(
          fc.record({ name: text, time: hrTime, attributes: sdkAttributes, droppedAttributesCount: small }),
          { maxLength: 2 },
        ),
        droppedEventsCount: small,
        status: fc.record({ code: fc.nat({ max: 2 }), message: fc.option(text, { nil: undefined }) }),
        links: fc.array(
          fc.record({
            traceId: hex(16),
            spanId: hex(8),
            traceFlags: fc.nat({ max: 255 }),
            traceState,
            isRemote: fc.boolean(),
            attributes: sdkAttributes,
            droppedAttributesCount: small,
          }),
          { maxLength: 2 },
        ),
        droppedLinksCount: small,
      }),
      { minLength: 1, maxLength: 5 },
    ),
  })
  .map(({ resources, scopes, spans }) =>
    spans.map((s): SdkLikeSpan => {
      const context = {
        traceId: s.traceId,
        spanId: s.spanId,
        traceFlags: s.traceFlags,
        traceState: state(s.traceState),
      };
      return {
        spanContext: () => context,
        parentSpanContext: s.parent
          ? { traceId: s.traceId, spanId: s.parent.spanId, traceFlags: s.traceFlags, isRemote: s.parent.isRemote }
          : undefined,
        name: s.name,
        kind: s.kind,
        startTime: s.startTime,
        endTime: s.endTime,
        attributes: s.attributes,
        droppedAttributesCount: s.droppedAttributesCount,
        events: s.events,
        droppedEventsCount: s.droppedEventsCount,
        status: s.status,
        links: s.links.map((l) => ({
          context: {
            traceId: l.traceId,
            spanId: l.spanId,
            traceFlags: l.traceFlags,
            traceState: state(l.traceState),
            isRemote: l.isRemote,
          },
          attributes: l.attributes,
          droppedAttributesCount: l.droppedAttributesCount,
        })),
        droppedLinksCount: s.droppedLinksCount,
        resource: resources[s.resource % resources.length]!,
        instrumentationScope: scopes[s.scope % scopes.length]!,
      };
    }),
  );

function state(value: string | undefined) {
  return value === undefined ? undefined : { serialize: () => value };
}

// --- what SDK spans must decode to ---

function modelValue(value: SdkValue): AnyValue {
  if (typeof value === 'string') return { type: 'string', value };
  if (typeof value === 'boolean') return { type: 'bool', value };
  if (typeof value === 'number')
    return Number.isInteger(value) ? { type: 'int', value: BigInt(value) } : { type: 'double', value };
  if (value instanceof Uint8Array) return { type: 'bytes', value: Uint8Array.from(value) };
  if (Array.isArray(value)) return { type: 'array', value: value.map(modelValue) };
  return { type: 'kvlist', value: modelAttributes(value) };
}

function modelAttributes(attributes: Record<string, SdkValue> | undefined): Attribute[] {
  return Object.keys(attributes ?? {}).map((key) => ({ key, value: modelValue(attributes![key]!) }));
}

const nanosOf = ([seconds, nanoseconds]: [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);
const flagsOf = (traceFlags: number, isRemote: boolean | undefined) =>
  (traceFlags & 0xff) | 0x100 | (isRemote ? 0x200 : 0);

/** The batch that the reference serializers' output of `spans` must decode to (same grouping). */
export function expectedBatch(spans: readonly SdkLikeSpan[]): SpanBatch {
  const resources = new Map<object, Map<string, SdkLikeSpan[]>>();
  for (const s of spans) {
    let scopes = resources.get(s.resource);
    if (!scopes) resources.set(s.resource, (scopes = new Map()));
    const scope = s.instrumentationScope;
    const key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`;
    scopes.set(key, [...(scopes.get(key) ?? []), s]);
  }
  return {
    resourceSpans: [...resources].map(([resource, scopes]) => ({
      resource: {
        attributes: modelAttributes((resource as SdkLikeSpan['resource']).attributes),
        droppedAttributesCount: 0,
      },
      schemaUrl: (resource as SdkLikeSpan['resource']).schemaUrl ?? '',
      scopeSpans: [...scopes.values()].map((group) => ({
        scope: {
          name: group[0]!.instrumentationScope.name,
          version: group[0]!.instrumentationScope.version ?? '',
          attributes: [],
          droppedAttributesCount: 0,
        },
        schemaUrl: '',
        spans: group.map((s): Span => {
          const context = s.spanContext();
          return {
            traceId: context.traceId,
            spanId: context.spanId,
            parentSpanId: s.parentSpanContext?.spanId ?? '',
            traceState: context.traceState?.serialize() ?? '',
            flags: flagsOf(context.traceFlags, s.parentSpanContext?.isRemote),
            name: s.name,
            kind: s.kind + 1,
            startTimeUnixNano: nanosOf(s.startTime),
            endTimeUnixNano: nanosOf(s.endTime),
            attributes: modelAttributes(s.attributes),
            droppedAttributesCount: s.droppedAttributesCount,
            events: s.events.map((e) => ({
              timeUnixNano: nanosOf(e.time),
              name: e.name,
              attributes: modelAttributes(e.attributes),
              droppedAttributesCount: e.droppedAttributesCount || 0,
            })),
            droppedEventsCount: s.droppedEventsCount,
            links: s.links.map((l) => ({
              traceId: l.context.traceId,
              spanId: l.context.spanId,
              traceState: l.context.traceState?.serialize() ?? '',
              attributes: modelAttributes(l.attributes),
              droppedAttributesCount: l.droppedAttributesCount || 0,
              flags: flagsOf(l.context.traceFlags, l.context.isRemote),
            })),
            droppedLinksCount: s.droppedLinksCount,
            status: { code: s.status.code, message: s.status.message ?? '' },
          };
        }),
      })),
    })),
  };
}

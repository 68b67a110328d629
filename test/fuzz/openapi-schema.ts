// For the API fuzz: fast-check arbitraries for the JSON Schema subset the two OpenAPI documents
// use (object, array, string with enum/format/pattern/length, integer and number with bounds,
// boolean, null, anyOf/oneOf, `nullable`), and the hostile variants of a value (wrong types,
// huge strings, deep nesting). Hand-written: the documents' schemas are small, and a general
// converter would bring far more than the dozen keywords they use.

import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';

export type Schema = Record<string, unknown>;

/** Values for keys the fuzz must not make slow or outward-bound by design (not by bug). */
export interface KeyOverrides {
  /** A key whose value is drawn from here instead of its schema (ids from the server's pools). */
  readonly [key: string]: Arbitrary<unknown> | undefined;
}

const MAX_DEPTH = 4;

/** A schema-valid value (or close to it: patterns and formats are followed where fast-check can). */
export function valueOf(schema: Schema | undefined, overrides: KeyOverrides, depth = 0): Arbitrary<unknown> {
  if (!schema || Object.keys(schema).length === 0 || depth > MAX_DEPTH) return leafJson();
  const choices = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (choices) return fc.oneof(...choices.map((choice) => valueOf(choice, overrides, depth + 1)));
  const nullable = schema.nullable === true;
  const base = nonNull(schema, overrides, depth);
  return nullable ? fc.oneof({ weight: 5, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
}

function nonNull(schema: Schema, overrides: KeyOverrides, depth: number): Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const record: Record<string, Arbitrary<unknown>> = {};
      for (const [key, property] of Object.entries(properties))
        record[key] = overrides[key] ?? valueOf(property, overrides, depth + 1);
      if (Object.keys(record).length === 0)
        return fc.dictionary(fc.string({ maxLength: 8 }), leafJson(), { maxKeys: 3 });
      return fc.record(record, { requiredKeys: [...required].filter((key) => key in record) });
    }
    case 'array':
      return fc.array(valueOf(schema.items as Schema | undefined, overrides, depth + 1), {
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
        minLength: Number(schema.minItems ?? 0),
      });
    case 'string': {
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
      return fc.string({
        minLength: Number(schema.minLength ?? 0),
        maxLength: Math.max(Number(schema.minLength ?? 0), 12),
      });
    }
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 1000) });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 1000), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return leafJson();
  }
}

function leafJson(): Arbitrary<unknown> {
  return fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}));
}

/** Nested `depth` levels deep: `[[[...]]]` or `{"a":{"a":...}}`. */
export function deeplyNested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A hostile body text: valid JSON of the wrong shape, broken JSON, huge or deeply nested. */
export function hostileBody(): Arbitrary<string> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.constantFrom('{', '{"a":', '[1,2', 'nul', '"unterminated', '{"a":1}}', '\u0000', ''),
    fc.integer({ min: 50, max: 20_000 }).map((depth) => deeplyNested(depth, 'array')),
    fc.integer({ min: 50, max: 20_000 }).map((depth) => deeplyNested(depth, 'object')),
    fc.integer({ min: 10_000, max: 400_000 }).map((size) => JSON.stringify({ metadata: { x: 'x'.repeat(size) } })),
    fc.string({ unit: 'binary', maxLength: 64 }),
  );
}

/** A hostile path or query value: not what the parameter expects, or nasty to parse. */
export function hostileText(): Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom('..', '../..', '%2e%2e%2f', '%00', "' OR 1=1 --", '-1', '1e309', 'NaN', '[]', '{}', 'null', '🙂'),
    fc.integer({ min: 1000, max: 20_000 }).map((size) => 'a'.repeat(size)),
  );
}

// The one ajv instance used to validate component configs, and the translation of ajv's errors
// into messages that start with the offending key's YAML path.

import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { didYouMean } from './suggest.ts';

// ajv-formats is CommonJS: a default import is its `module.exports`, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

/**
 * Annotation of an object schema listing keys it no longer accepts, each with what to write
 * instead: `{'x-removed-keys': {allow_origins: 'renamed to allowed_origins'}}`. Such a key is still
 * an unknown key, and its error says what replaced it.
 */
export const REMOVED_KEYS = 'x-removed-keys';

export function createAjv(): Ajv {
  // `verbose` keeps the failing value and its schema on each error: REMOVED_KEYS is read from
  // the schema, and "did you mean" suggestions from its properties and enums.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, verbose: true });
  addFormats(ajv);
  return ajv;
}

const sharedAjv = createAjv();
const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles (once per schema object) and returns the validator for a schema. */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = sharedAjv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Joins a base path (`exporters.backend`) and an ajv instance path (`/retry/max`). */
export function joinPath(base: string, instancePath: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [base, ...parts].filter((part) => part !== '').join('.');
}

/** One readable line per ajv error, each prefixed by its YAML path. */
export function formatAjvErrors(base: string, errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines: string[] = [];
  for (const error of errors ?? []) {
    const path = joinPath(base, error.instancePath);
    if (error.propertyName !== undefined) {
      // A key (not a value) is invalid, e.g. a component id that is not `type` or `type/name`.
      lines.push(
        `${[path, error.propertyName].filter(Boolean).join('.')}: invalid name (${error.message ?? 'is invalid'})`,
      );
      continue;
    }
    switch (error.keyword) {
      case 'propertyNames':
        break; // Reported through the error that carries `propertyName`.
      case 'additionalProperties': {
        const key = String((error.params as { additionalProperty: string }).additionalProperty);
        const parentSchema = error.parentSchema as
          { properties?: object; [REMOVED_KEYS]?: Record<string, string> } | undefined;
        const removed = parentSchema?.[REMOVED_KEYS];
        const hint =
          removed && Object.hasOwn(removed, key)
            ? ` (${removed[key]})`
            : didYouMean(key, Object.keys(parentSchema?.properties ?? {}));
        lines.push(`${[path, key].filter(Boolean).join('.')}: unknown key${hint}`);
        break;
      }
      case 'enum': {
        const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
        const strings = allowed.filter((value): value is string => typeof value === 'string');
        const suggestion = typeof error.data === 'string' ? didYouMean(error.data, strings) : '';
        lines.push(
          `${path || '(root)'}: must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${suggestion}`,
        );
        break;
      }
      case 'required': {
        const key = String((error.params as { missingProperty: string }).missingProperty);
        lines.push(`${[path, key].filter(Boolean).join('.')}: is required`);
        break;
      }
      case 'if':
        break; // The failing `then`/`else` branch reports the useful error itself.
      case 'not': {
        // A `not` subschema says in its `description` what the rule is (ajv's "must NOT be valid"
        // would not): `not: {required: [a, b], description: 'a and b exclude each other'}`.
        const description = (error.schema as { description?: unknown } | undefined)?.description;
        lines.push(
          `${path || '(root)'}: ${typeof description === 'string' ? description : (error.message ?? 'is invalid')}`,
        );
        break;
      }
      default:
        lines.push(`${path || '(root)'}: ${error.message ?? 'is invalid'}`);
    }
  }
  return [...new Set(lines)];
}

/**
 * Validates `data` in place (ajv fills in defaults) and returns the errors, prefixed by `base`.
 */
export function validateAgainst(schema: Record<string, unknown>, data: unknown, base: string): string[] {
  const validate = validatorFor(schema);
  return validate(data) ? [] : formatAjvErrors(base, validate.errors);
}

/** A deep copy of the schema's defaults: what a component gets from `type: {}`. */
export function defaultsOf(schema: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  validatorFor(schema)(config);
  return config;
}

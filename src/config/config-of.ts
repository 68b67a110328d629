// The TypeScript type of a component's config, derived from its JSON Schema so that the two cannot
// drift apart: a plugin writes its schema once (`as const`) and takes `ConfigOf<typeof schema>`.

import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/** `T` with every property and array element read-only, all the way down (configs are frozen). */
export type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/**
 * The validated config a component receives for `schema`. The framework validates with ajv's
 * `useDefaults`, so a property that has a `default` is always present: it is required in this type
 * even when the schema does not list it under `required` (json-schema-to-ts's
 * `keepDefaultedPropertiesOptional: false`, spelled out here so that the rule is visible). A
 * property with neither `default` nor `required` stays optional. The config is deep-frozen, so
 * the type is read-only.
 */
export type ConfigOf<S extends JSONSchema> = DeepReadonly<FromSchema<S, { keepDefaultedPropertiesOptional: false }>>;

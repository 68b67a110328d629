// JSON Schemas of a compiled graph's input, output, state and context, read at run time from the
// schemas the graph was built with: a `StateSchema`, Zod objects (through LangGraph's schema meta
// registry, then plain Zod). `Annotation` graphs carry no schema: theirs are read from their
// TypeScript types (./type-schemas/), and, where those cannot be read, `channelSchemas` lists the
// state's channels.

import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';
import * as ownHelpers from '@langchain/langgraph/zod/schema';
import type { ZodSchemaHelpers } from './schema-helpers.ts';

/** The schemas the `/assistants/{id}/schemas` endpoint serves. `null` when unknown. */
export interface GraphSchemas {
  readonly input_schema: unknown;
  readonly output_schema: unknown;
  readonly state_schema: unknown;
  readonly config_schema: unknown;
  readonly context_schema: unknown;
}

/** The per-subgraph schemas of `/assistants/{id}/subgraphs` (keys as the reference serves them). */
export interface SubgraphSchemas {
  readonly state: unknown;
  readonly input: unknown;
  readonly output: unknown;
  readonly config: unknown;
}

// The builder fields LangGraph keeps the runtime schemas in (internal, but stable across 1.x and
// what the reference server reads too).
interface BuilderInternals {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
  _schemaDefinition?: unknown;
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
}

interface StateSchemaLike {
  getJsonSchema(): unknown;
  getInputJsonSchema(): unknown;
}

function isStateSchemaLike(value: unknown): value is StateSchemaLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as StateSchemaLike).getJsonSchema === 'function' &&
    typeof (value as StateSchemaLike).getInputJsonSchema === 'function'
  );
}

function isZod(value: unknown): boolean {
  return isZodSchemaV4(value) || isZodSchemaV3(value);
}

function zodToJson(value: unknown): unknown {
  if (!isZod(value)) return undefined;
  try {
    return toJsonSchema(value as Parameters<typeof toJsonSchema>[0]);
  } catch {
    return undefined;
  }
}

/**
 * The schemas one compiled graph was built with; `undefined` when it has none to read (an
 * `Annotation` graph, or no builder). Never throws for a graph it cannot read. `helpers`: the
 * graph's own copy of LangGraph's Zod schema helpers (./schema-helpers.ts).
 */
export function runtimeSchemas(graph: unknown, helpers: ZodSchemaHelpers = ownHelpers): SubgraphSchemas | undefined {
  const builder = (graph as { builder?: BuilderInternals } | undefined)?.builder;
  if (!builder) return undefined;
  const config = zodToJson(builder._configRuntimeSchema) ?? null;

  // 1. StateSchema: carries its own JSON Schema, including jsonSchemaExtra.
  if (isStateSchemaLike(builder._schemaRuntimeDefinition)) {
    const state = builder._schemaRuntimeDefinition;
    const input = isStateSchemaLike(builder._inputRuntimeDefinition)
      ? builder._inputRuntimeDefinition.getInputJsonSchema()
      : state.getInputJsonSchema();
    const output = isStateSchemaLike(builder._outputRuntimeDefinition)
      ? builder._outputRuntimeDefinition.getJsonSchema()
      : state.getJsonSchema();
    return { state: state.getJsonSchema(), input, output, config };
  }

  // 2. Zod through LangGraph's meta registry (keeps `withLangGraph` extras), 3. plain Zod.
  if (isZod(builder._schemaRuntimeDefinition)) {
    try {
      const fromRegistry = {
        state: helpers.getUpdateTypeSchema(graph as never) ?? null,
        input: helpers.getInputTypeSchema(graph as never) ?? null,
        output: helpers.getOutputTypeSchema(graph as never) ?? null,
        config: helpers.getConfigTypeSchema(graph as never) ?? config,
      };
      if (Object.values(fromRegistry).some((schema) => schema !== null)) return fromRegistry;
    } catch {
      // fall through to the plain conversion
    }
    const state = zodToJson(builder._schemaRuntimeDefinition) ?? null;
    const input = zodToJson(builder._inputRuntimeDefinition) ?? (state ? withoutRequired(state) : null);
    const output = zodToJson(builder._outputRuntimeDefinition) ?? state;
    return { state, input, output, config };
  }
  return undefined;
}

/** What is known of a graph without schemas or readable types: its state channels, untyped. */
export function channelSchemas(graph: unknown): SubgraphSchemas {
  const builder = (graph as { builder?: BuilderInternals } | undefined)?.builder;
  if (!builder) return { state: null, input: null, output: null, config: null };
  const config = zodToJson(builder._configRuntimeSchema) ?? null;
  const state = channelsSchema(builder._schemaDefinition);
  return {
    state,
    input: channelsSchema(builder._inputDefinition) ?? (state ? withoutRequired(state) : null),
    output: channelsSchema(builder._outputDefinition) ?? state,
    config,
  };
}

/** The endpoint's shape: `context_schema` equals `config_schema`, as in the reference. */
export function toGraphSchemas(schemas: SubgraphSchemas): GraphSchemas {
  return {
    input_schema: schemas.input,
    output_schema: schemas.output,
    state_schema: schemas.state,
    config_schema: schemas.config,
    context_schema: schemas.config,
  };
}

function withoutRequired(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const { required: _required, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function channelsSchema(definition: unknown): unknown {
  if (typeof definition !== 'object' || definition === null) return null;
  const keys = Object.keys(definition).filter((key) => !key.startsWith('__'));
  if (keys.length === 0) return null;
  return {
    type: 'object',
    properties: Object.fromEntries(keys.map((key) => [key, {}])),
    $schema: 'http://json-schema.org/draft-07/schema#',
  };
}

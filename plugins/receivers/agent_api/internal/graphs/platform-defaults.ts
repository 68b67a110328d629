// `LANGGRAPH_CONFIG`, as the LangGraph platform defines it: a JSON object mapping a graph id to
// the default config of that graph's system assistant (`{"agent": {"configurable": {...}},
// "other": {"context": {...}}}`; a `context` member becomes the assistant's context). A
// deployment sets it in its langgraph.json `env` or its environment, and it applies when the
// system assistant is created.
//
// tracepipe once read the same variable as the path of langgraph.json. A value that is not JSON
// but names an existing file is still read that way (`legacyPath`), with a warning naming the
// variable that replaced it (LANGGRAPH_JSON in configs/*.yaml).

import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject } from '../storage/storage.ts';

/** The defaults of one graph's system assistant. */
export interface AssistantDefaults {
  readonly config: JsonObject;
  readonly context: JsonObject;
}

export type PlatformConfig =
  | { readonly kind: 'unset' }
  | { readonly kind: 'defaults'; readonly byGraph: ReadonlyMap<string, AssistantDefaults> }
  | { readonly kind: 'legacy_path'; readonly path: string };

/** `LANGGRAPH_CONFIG` holds something that is neither the platform's JSON nor a file's path. */
export class PlatformConfigError extends Error {
  override readonly name = 'PlatformConfigError';
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/** Reads `raw` (the variable's value; `cwd` resolves a legacy relative path). */
export function readPlatformConfig(raw: string | undefined, cwd = process.cwd()): PlatformConfig {
  if (raw === undefined || raw.trim() === '') return { kind: 'unset' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    const path = resolve(cwd, raw);
    if (isFile(path)) return { kind: 'legacy_path', path };
    throw new PlatformConfigError(
      'LANGGRAPH_CONFIG must be a JSON object of default assistant configs by graph id ({"agent": {"configurable": {...}}}); it is neither JSON nor the path of a file. Name the langgraph.json file with LANGGRAPH_JSON.',
    );
  }
  if (!isObject(parsed)) {
    throw new PlatformConfigError('LANGGRAPH_CONFIG must be a JSON object of default assistant configs by graph id.');
  }
  const byGraph = new Map<string, AssistantDefaults>();
  for (const [graphId, value] of Object.entries(parsed)) {
    if (!isObject(value)) {
      throw new PlatformConfigError(
        `LANGGRAPH_CONFIG.${graphId} must be an object (the default config of its assistant).`,
      );
    }
    const { context, ...config } = value;
    if (context !== undefined && !isObject(context)) {
      throw new PlatformConfigError(`LANGGRAPH_CONFIG.${graphId}.context must be an object.`);
    }
    byGraph.set(graphId, { config, context: context ?? {} });
  }
  return { kind: 'defaults', byGraph };
}

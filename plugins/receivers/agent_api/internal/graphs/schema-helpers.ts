// LangGraph's Zod schema helpers (`@langchain/langgraph/zod/schema`) as the graph itself sees
// them. `withLangGraph(schema, {jsonSchemaExtra, ...})` records its extras in a registry that lives
// in the module instance of `@langchain/langgraph` the graph imports; a deployment that brings its
// own copy (its node_modules beside its graphs) fills that copy's registry, which this server's
// copy never sees. So the helpers are imported from the package the graph module resolves — its
// ESM build, the one an ESM graph loads — and from this server's copy when it resolves none.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ownHelpers from '@langchain/langgraph/zod/schema';

export type ZodSchemaHelpers = Pick<
  typeof ownHelpers,
  'getConfigTypeSchema' | 'getInputTypeSchema' | 'getOutputTypeSchema' | 'getUpdateTypeSchema'
>;

const byPackage = new Map<string, Promise<ZodSchemaHelpers>>();

/** The ESM file a package's `exports` map gives `subpath` under the `import` condition. */
function importTarget(manifestPath: string, subpath: string): string | undefined {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports?: Record<string, unknown> };
  const entry = manifest.exports?.[subpath] as { import?: unknown } | undefined;
  const target = typeof entry?.import === 'string' ? entry.import : (entry?.import as { default?: unknown })?.default;
  return typeof target === 'string' ? resolve(dirname(manifestPath), target) : undefined;
}

/** The helpers of the `@langchain/langgraph` that `modulePath` (a graph module) imports. */
export function schemaHelpersFor(modulePath: string): Promise<ZodSchemaHelpers> {
  let manifestPath: string;
  try {
    manifestPath = createRequire(modulePath).resolve('@langchain/langgraph/package.json');
  } catch {
    return Promise.resolve(ownHelpers);
  }
  let helpers = byPackage.get(manifestPath);
  if (!helpers) {
    const target = importTarget(manifestPath, './zod/schema');
    helpers = target
      ? (import(pathToFileURL(target).href) as Promise<ZodSchemaHelpers>).catch(() => ownHelpers)
      : Promise.resolve(ownHelpers);
    byPackage.set(manifestPath, helpers);
  }
  return helpers;
}

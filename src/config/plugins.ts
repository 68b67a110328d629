// Loads third-party component factories from the config's `plugins:` list: relative or absolute
// paths (resolved against the config file's directory) and package names. A TypeScript plugin gets
// tsx's loader registered on demand (see runtime/user_modules.ts).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TracepipeError } from '../errors.ts';
import type { Factory } from '../pipeline/component.ts';
import { describeInvalidFactory } from '../pipeline/registry.ts';
import { importModule } from '../runtime/user_modules.ts';

function isPath(specifier: string): boolean {
  return specifier.startsWith('.') || isAbsolute(specifier);
}

function resolveSpecifier(specifier: string, baseDir: string): string {
  if (isPath(specifier)) {
    const path = resolve(baseDir, specifier);
    if (!existsSync(path)) {
      throw new TracepipeError('TP_ERR_PLUGIN_LOAD', [specifier, `no such file ${path}`]);
    }
    return pathToFileURL(path).href;
  }
  try {
    return pathToFileURL(createRequire(join(baseDir, 'noop.js')).resolve(specifier)).href;
  } catch {
    return specifier; // Let import() find it from tracepipe's own node_modules, or fail clearly.
  }
}

/** Imports one plugin module and returns the factories it exports (default or `factories`). */
export async function loadPlugin(specifier: string, baseDir: string): Promise<Factory[]> {
  const url = resolveSpecifier(specifier, baseDir);
  let module: Record<string, unknown>;
  try {
    module = await importModule(url);
  } catch (error) {
    throw new TracepipeError('TP_ERR_PLUGIN_LOAD', [specifier, (error as Error).message], { cause: error });
  }
  const exported = module.default ?? module.factories ?? module.factory;
  if (exported === undefined) {
    throw new TracepipeError('TP_ERR_PLUGIN_INVALID', [specifier, 'no default, `factories` or `factory` export']);
  }
  const factories = Array.isArray(exported) ? exported : [exported];
  for (const factory of factories) {
    const problem = describeInvalidFactory(factory);
    if (problem) throw new TracepipeError('TP_ERR_PLUGIN_INVALID', [specifier, problem]);
  }
  return factories as Factory[];
}

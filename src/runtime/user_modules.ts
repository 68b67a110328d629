// Imports modules the user supplies — plugins, graphs, handlers — which may be TypeScript.
//
// tracepipe itself runs as compiled JavaScript (dist/). Registering tsx's loader costs about a
// third of a second (loading it, starting its hooks thread) and then slows every later import, so
// it is registered on demand: the first time a TypeScript module is imported through here. A start
// that loads no TypeScript — the proxy — never pays for it.

import { fileURLToPath, pathToFileURL } from 'node:url';
import { isAbsolute } from 'node:path';

const TYPESCRIPT_EXTENSION = /\.(?:[cm]?ts|tsx)$/i;

let registering: Promise<void> | undefined;

/** Whether a path, file URL or specifier names a TypeScript module (by its extension). */
export function isTypeScriptModule(specifier: string): boolean {
  const path = specifier.replace(/[?#].*$/, '');
  return TYPESCRIPT_EXTENSION.test(path) && !path.endsWith('.d.ts');
}

/**
 * Whether a TypeScript loader already runs: this very module was loaded from its `.ts` source (the
 * tests, `TRACEPIPE_FROM_SOURCE=1`), or node was started with `--import tsx` / `--loader tsx`.
 */
export function typeScriptLoaderActive(): boolean {
  if (import.meta.url.endsWith('.ts')) return true;
  const argv = process.execArgv.join(' ');
  return /(?:--import|--loader|--experimental-loader)[= ]tsx\b/.test(argv);
}

/** Registers tsx's ESM loader once (a no-op when a TypeScript loader already runs). */
export function enableTypeScript(): Promise<void> {
  registering ??= (async () => {
    if (typeScriptLoaderActive()) return;
    const { register } = await import('tsx/esm/api');
    register();
  })();
  return registering;
}

/**
 * `import()` for user code: an absolute path, a `file:` URL or a package specifier. TypeScript
 * modules (`.ts`, `.mts`, `.cts`, `.tsx`) get tsx's loader registered first. Components that load
 * user code (a graph, a handler) should import it through here rather than with a bare `import()`.
 */
export async function importModule(specifier: string): Promise<Record<string, unknown>> {
  const url = isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier;
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  if (isTypeScriptModule(path)) await enableTypeScript();
  return (await import(url)) as Record<string, unknown>;
}

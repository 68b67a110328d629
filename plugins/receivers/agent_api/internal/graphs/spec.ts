// Parsing of the deployment's graph map: the plugin config's inline `graphs` object or a
// `langgraph.json` file (`{graphs: {id: "./file.ts:export"}, env?}`), into absolute graph specs.
// Pure apart from reading the langgraph.json file; nothing is imported here.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { GraphLoadError } from './errors.ts';

/** One graph of the deployment: its id and where its module and export are. */
export interface GraphSpec {
  readonly graphId: string;
  /** Absolute path of the TS/JS module. */
  readonly path: string;
  /** The module export holding the graph; `default` when the spec names none. */
  readonly exportName: string;
}

/** The graph-related keys of the plugin config. */
export interface GraphSpecInput {
  readonly graphs?: Record<string, string>;
  readonly langgraph_config?: string;
}

// Graph ids become URL path segments and uuid5 names; keep them to what the reference accepts in
// practice (letters, digits, `_`, `-`, `.`), so that `/assistants/<graph id>` always routes.
const GRAPH_ID = /^[A-Za-z0-9_.-]+$/;

/**
 * Parses the graph map into specs, paths resolved to absolute ones. Inline `graphs` paths resolve
 * against `baseDir` (the config file's directory). Without inline `graphs`, the `langgraph_config`
 * file is read: its path resolves against `baseDir`, and the graph paths inside it against the
 * file's own directory, as `langgraph dev` does. Inline `graphs` win outright (the file is then not
 * read), so a default `langgraph_config` never gets in the way. Throws `GraphLoadError` naming the
 * offending graph or file.
 */
export function parseGraphSpecs(input: GraphSpecInput, baseDir: string): GraphSpec[] {
  const entries = new Map<string, GraphSpec>();
  const inline = Object.entries(input.graphs ?? {});
  if (inline.length === 0 && input.langgraph_config !== undefined) {
    const file = resolve(baseDir, input.langgraph_config);
    const document = readLanggraphJson(file);
    const graphs = document.graphs;
    if (typeof graphs !== 'object' || graphs === null || Array.isArray(graphs)) {
      throw new GraphLoadError(
        'invalid_spec',
        undefined,
        `${file}: "graphs" must be an object mapping graph ids to "path:export"`,
      );
    }
    for (const [graphId, raw] of Object.entries(graphs as Record<string, unknown>)) {
      // langgraph.json also allows `{path, description}` objects per graph.
      const text = typeof raw === 'object' && raw !== null && 'path' in raw ? (raw as { path: unknown }).path : raw;
      entries.set(graphId, parseOne(graphId, text, dirname(file), file));
    }
  }
  for (const [graphId, text] of inline) {
    entries.set(graphId, parseOne(graphId, text, baseDir, 'graphs'));
  }
  if (entries.size === 0) {
    throw new GraphLoadError('invalid_spec', undefined, 'no graphs configured: set "graphs" or "langgraph_config"');
  }
  return [...entries.values()];
}

/**
 * The environment variables a langgraph.json declares (`env`: an object, or the path of a
 * `.env` file relative to the json file). The server decides whether to apply them; parsing them
 * has no side effect. Empty when the graphs come inline, or the file has no `env`.
 */
export function parseGraphEnv(input: GraphSpecInput, baseDir: string): Record<string, string> {
  if (input.langgraph_config === undefined || Object.keys(input.graphs ?? {}).length > 0) return {};
  const file = resolve(baseDir, input.langgraph_config);
  const env = readLanggraphJson(file).env;
  if (env === undefined || env === null) return {};
  if (typeof env === 'object' && !Array.isArray(env)) {
    return Object.fromEntries(
      Object.entries(env as Record<string, unknown>).map(([key, value]) => [key, String(value)]),
    );
  }
  if (typeof env === 'string') return parseDotEnv(resolve(dirname(file), env));
  throw new GraphLoadError('invalid_spec', undefined, `${file}: "env" must be an object or the path of a .env file`);
}

export function readLanggraphJson(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new GraphLoadError(
      'config_missing',
      undefined,
      `cannot read langgraph config ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new GraphLoadError('invalid_spec', undefined, `${file} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new GraphLoadError('invalid_spec', undefined, `${file} must hold a JSON object`);
  }
  return document as Record<string, unknown>;
}

function parseOne(graphId: string, text: unknown, baseDir: string, where: string): GraphSpec {
  if (!GRAPH_ID.test(graphId)) {
    throw new GraphLoadError(
      'invalid_spec',
      graphId,
      `${where}: graph id "${graphId}" may only hold letters, digits, "_", "-" and "."`,
    );
  }
  if (typeof text !== 'string' || text.trim() === '') {
    throw new GraphLoadError(
      'invalid_spec',
      graphId,
      `${where}.${graphId}: expected "path/to/file.ts:exportName", got ${JSON.stringify(text)}`,
    );
  }
  // Split on the last colon: the export name never holds one, a path might (C:\ on Windows).
  const colon = text.lastIndexOf(':');
  const hasExport = colon > 0 && !/[\\/]/.test(text.slice(colon + 1)) && colon < text.length - 1;
  const file = hasExport ? text.slice(0, colon) : text.replace(/:$/, '');
  const exportName = hasExport ? text.slice(colon + 1) : 'default';
  if (!/^[A-Za-z_$][\w$]*$/.test(exportName)) {
    throw new GraphLoadError(
      'invalid_spec',
      graphId,
      `${where}.${graphId}: "${exportName}" is not a valid export name`,
    );
  }
  return { graphId, path: resolve(baseDir, file), exportName };
}

// A minimal .env reader (KEY=value, optional quotes, # comments): enough for langgraph.json's
// `env` files without another dependency.
function parseDotEnv(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new GraphLoadError('config_missing', undefined, `cannot read env file ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith('#')) continue;
    let value = match[2]!;
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    env[match[1]!] = value;
  }
  return env;
}

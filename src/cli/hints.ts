// Hints the command line prints under a start-up error: which config key — and which environment
// variable or `--set` — changes what failed. Computed only when something failed, from the config
// file's text, so they cost nothing on a good start.

import { parseDocument } from 'yaml';
import { environmentReferences } from '../config/expand.ts';
import type { EnvironmentReference } from '../config/expand.ts';

/** Paths (`a.b.c`) of the values in `data` for which `match(key, value)` holds. */
function findPaths(data: unknown, match: (key: string, value: unknown) => boolean, prefix = ''): string[] {
  if (typeof data !== 'object' || data === null) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (match(key, value)) found.push(path);
    else found.push(...findPaths(value, match, path));
  }
  return found;
}

function referencesOf(text: string): EnvironmentReference[] {
  try {
    return environmentReferences(parseDocument(text));
  } catch {
    return [];
  }
}

/** "set HTTP_PORT=<free port> or pass --set receivers.otlp.port=<free port>" for each key. */
function describeKeys(
  paths: readonly string[],
  references: readonly EnvironmentReference[],
  value: string,
): string | undefined {
  const ways = paths.map((path) => {
    const variables = [
      ...new Set(references.filter((reference) => reference.path === path).map((reference) => reference.name)),
    ];
    const byEnv = variables.length > 0 ? `set ${variables.map((name) => `${name}=${value}`).join(' or ')}, or ` : '';
    return `${byEnv}pass --set ${path}=${value}`;
  });
  return ways.length > 0 ? ways.join('; ') : undefined;
}

/**
 * For a listener that could not bind `host:port`: the config keys that hold that port (a `port`
 * key with that number, or a `listen: "host:port"`), and the variables that set them.
 */
export function listenHint(
  failure: { readonly host: string; readonly port: number; readonly code: string },
  data: unknown,
  text: string,
): string | undefined {
  const paths = findPaths(
    data,
    (key, value) =>
      (key === 'port' && value === failure.port) ||
      (key === 'listen' && typeof value === 'string' && value.endsWith(`:${failure.port}`)),
  );
  const listenKey = paths.some((path) => path.endsWith('.listen'));
  const ways = describeKeys(paths, referencesOf(text), listenKey && paths.length === 1 ? '<host:port>' : '<free port>');
  if (failure.code === 'EADDRNOTAVAIL')
    return `${failure.host} is not an address of this machine; 0.0.0.0 listens on all of them`;
  if (!ways) return undefined;
  if (failure.code === 'EACCES') return `ports below 1024 need privileges; choose another: ${ways}`;
  return `another process listens there; choose another port: ${ways}`;
}

/**
 * For validation problems of the form `<path>: listens on host:port, which <other> already uses`:
 * the ways to move one of them.
 */
export function conflictHint(problems: readonly string[], text: string): string | undefined {
  const references = referencesOf(text);
  for (const problem of problems) {
    const match = /^(\S+): listens on \S+:(\d+), which (\S+) already uses/.exec(problem);
    if (!match) continue;
    const keys = [`${match[1]}.port`, `${match[3]}.port`];
    return `two components claim port ${match[2]}; move one: ${describeKeys(keys, references, '<free port>')}`;
  }
  return undefined;
}

/**
 * For a YAML syntax error at or just after a line that holds a `${…}` reference inside a flow
 * collection (`{ port: ${PORT} }`): YAML reads `{` and `}` there as its own brackets.
 */
export function yamlHint(message: string, text: string): string | undefined {
  const position = /:(\d+):\d+: /.exec(message);
  if (!position) return undefined;
  const lines = text.split('\n');
  const at = Number(position[1]) - 1;
  for (const line of [lines[at], lines[at - 1]]) {
    if (line === undefined || !/[{[][^#]*\$\{/.test(line)) continue;
    const reference = /\$\{[^}]*\}/.exec(line)?.[0] ?? '${VAR}';
    return (
      `inside { … } or [ … ] a ${reference} reference must be quoted ("${reference}", which keeps it a string) ` +
      `or written in block style (one "key: ${reference}" per line, which keeps a number a number)`
    );
  }
  return undefined;
}

// langgraph.json's `ui` section (`{"agent": "./src/agent/ui.tsx"}`: the components of each UI,
// by name, relative to the file) and `ui_config.shared` (packages the chat page provides, beside
// React and the SDK). Inline `graphs` in the plugin config mean there is no langgraph.json: no UI.

import { dirname, resolve } from 'node:path';
import { GraphLoadError } from '../graphs/errors.ts';
import { readLanggraphJson } from '../graphs/spec.ts';
import type { GraphSpecInput } from '../graphs/spec.ts';

export interface UiSection {
  /** UI name → absolute path of its components module. */
  readonly components: ReadonlyMap<string, string>;
  readonly shared: readonly string[];
}

/** A UI name is a path segment of `/ui/<name>/...`. */
const UI_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Reads and checks the `ui` section; throws `GraphLoadError` naming the key. */
export function parseUiSection(input: GraphSpecInput, baseDir: string): UiSection {
  const none = { components: new Map<string, string>(), shared: [] };
  if (input.langgraph_config === undefined || Object.keys(input.graphs ?? {}).length > 0) return none;
  const file = resolve(baseDir, input.langgraph_config);
  const json = readLanggraphJson(file) as { ui?: unknown; ui_config?: unknown };
  const problems: string[] = [];
  const components = new Map<string, string>();
  if (json.ui !== undefined && json.ui !== null) {
    if (typeof json.ui !== 'object' || Array.isArray(json.ui)) problems.push(`${file}: "ui" must be an object`);
    else
      for (const [name, path] of Object.entries(json.ui)) {
        if (!UI_NAME.test(name)) problems.push(`${file}: ui.${name}: a UI name is letters, digits, "_", "-" and "."`);
        else if (typeof path !== 'string' || path.trim() === '')
          problems.push(`${file}: ui.${name}: must be the path of a components module`);
        else components.set(name, resolve(dirname(file), path));
      }
  }
  const shared = (json.ui_config as { shared?: unknown } | undefined)?.shared ?? [];
  if (!Array.isArray(shared) || shared.some((item) => typeof item !== 'string'))
    problems.push(`${file}: ui_config.shared: must be a list of package names`);
  if (problems.length > 0) throw new GraphLoadError('invalid_spec', undefined, problems.join('; '));
  return { components, shared: shared as string[] };
}

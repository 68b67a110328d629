// The deployment's `http` settings that this server reads from langgraph.json:
// `http.configurable_headers` (which request headers reach a run's `configurable`; see
// `../api/configurable-headers.ts`), and the platform's switches `http.disable_mcp` and
// `http.disable_a2a` (true: `/mcp`, or `/a2a/…` and the agent cards, are not served), and
// `http.app`, the deployment's own HTTP app mounted in front of the API (`../http/custom-app.ts`). Inline
// `graphs` in the plugin config mean there is no langgraph.json, hence the defaults.

import { dirname, resolve } from 'node:path';
import { parseConfigurableHeaders } from '../api/configurable-headers.ts';
import type { ConfigurableHeadersConfig } from '../api/configurable-headers.ts';
import { GraphLoadError } from './errors.ts';
import { readLanggraphJson } from './spec.ts';
import type { GraphSpecInput } from './spec.ts';

export interface DeploymentHttpConfig {
  readonly configurableHeaders?: ConfigurableHeadersConfig;
  /** `http.disable_mcp: true`. */
  readonly disableMcp?: boolean;
  /** `http.disable_a2a: true`. */
  readonly disableA2a?: boolean;
  /** `http.app`, e.g. `./http.ts:app`: the module (absolute) and the export holding the app. */
  readonly app?: { readonly path: string; readonly exportName: string };
}

/** `./http.ts:app` → the file (relative to langgraph.json) and the export; no export: `default`. */
function parseAppSpec(text: string, file: string): { path: string; exportName: string } {
  const colon = text.lastIndexOf(':');
  const hasExport = colon > 0 && colon < text.length - 1 && !/[\\/]/.test(text.slice(colon + 1));
  return {
    path: resolve(dirname(file), hasExport ? text.slice(0, colon) : text.replace(/:$/, '')),
    exportName: hasExport ? text.slice(colon + 1) : 'default',
  };
}

/** Reads and checks langgraph.json's `http` section; throws `GraphLoadError` naming the key. */
export function parseDeploymentHttp(input: GraphSpecInput, baseDir: string): DeploymentHttpConfig {
  if (input.langgraph_config === undefined || Object.keys(input.graphs ?? {}).length > 0) return {};
  const file = resolve(baseDir, input.langgraph_config);
  const http = readLanggraphJson(file).http;
  if (http === undefined || http === null) return {};
  if (typeof http !== 'object' || Array.isArray(http))
    throw new GraphLoadError('invalid_spec', undefined, `${file}: "http" must be an object`);
  const section = http as Record<string, unknown>;
  const { config, problems } = parseConfigurableHeaders(
    section.configurable_headers,
    `${file}: http.configurable_headers`,
  );
  const flag = (key: string): boolean => {
    const value = section[key];
    if (value === undefined || value === null) return false;
    if (typeof value !== 'boolean') {
      problems.push(`${file}: http.${key}: must be true or false (got ${JSON.stringify(value)})`);
      return false;
    }
    return value;
  };
  const disableMcp = flag('disable_mcp');
  const disableA2a = flag('disable_a2a');
  let app: DeploymentHttpConfig['app'];
  if (typeof section.app === 'string' && section.app.trim() !== '') app = parseAppSpec(section.app.trim(), file);
  else if (section.app !== undefined && section.app !== null)
    problems.push(`${file}: http.app: must be a string such as "./http.ts:app" (got ${JSON.stringify(section.app)})`);
  if (problems.length > 0) throw new GraphLoadError('invalid_spec', undefined, problems.join('; '));
  return {
    ...(config ? { configurableHeaders: config } : {}),
    ...(disableMcp ? { disableMcp } : {}),
    ...(disableA2a ? { disableA2a } : {}),
    ...(app ? { app } : {}),
  };
}

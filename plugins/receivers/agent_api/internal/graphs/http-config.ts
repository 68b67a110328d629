// The deployment's `http` settings that this server reads from langgraph.json:
// `http.configurable_headers` (which request headers reach a run's `configurable`; see
// `../domain/configurable-headers.ts`), and the platform's switches `http.disable_mcp` and
// `http.disable_a2a` (true: `/mcp`, or `/a2a/…` and the agent cards, are not served). Inline
// `graphs` in the plugin config mean there is no langgraph.json, hence the defaults.

import { resolve } from 'node:path';
import { parseConfigurableHeaders } from '../domain/configurable-headers.ts';
import type { ConfigurableHeadersConfig } from '../domain/configurable-headers.ts';
import { GraphLoadError } from './errors.ts';
import { readLanggraphJson } from './spec.ts';
import type { GraphSpecInput } from './spec.ts';

export interface DeploymentHttpConfig {
  readonly configurableHeaders?: ConfigurableHeadersConfig;
  /** `http.disable_mcp: true`. */
  readonly disableMcp?: boolean;
  /** `http.disable_a2a: true`. */
  readonly disableA2a?: boolean;
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
  if (problems.length > 0) throw new GraphLoadError('invalid_spec', undefined, problems.join('; '));
  return {
    ...(config ? { configurableHeaders: config } : {}),
    ...(disableMcp ? { disableMcp } : {}),
    ...(disableA2a ? { disableA2a } : {}),
  };
}

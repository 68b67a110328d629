// The deployment's `http` settings that this server reads from langgraph.json: today
// `http.configurable_headers` (which request headers reach a run's `configurable`; see
// `../domain/configurable-headers.ts`). Inline `graphs` in the plugin config mean there is no
// langgraph.json, hence the defaults.

import { resolve } from 'node:path';
import { parseConfigurableHeaders } from '../domain/configurable-headers.ts';
import type { ConfigurableHeadersConfig } from '../domain/configurable-headers.ts';
import { GraphLoadError } from './errors.ts';
import { readLanggraphJson } from './spec.ts';
import type { GraphSpecInput } from './spec.ts';

export interface DeploymentHttpConfig {
  readonly configurableHeaders?: ConfigurableHeadersConfig;
}

/** Reads and checks langgraph.json's `http` section; throws `GraphLoadError` naming the key. */
export function parseDeploymentHttp(input: GraphSpecInput, baseDir: string): DeploymentHttpConfig {
  if (input.langgraph_config === undefined || Object.keys(input.graphs ?? {}).length > 0) return {};
  const file = resolve(baseDir, input.langgraph_config);
  const http = readLanggraphJson(file).http;
  if (http === undefined || http === null) return {};
  if (typeof http !== 'object' || Array.isArray(http))
    throw new GraphLoadError('invalid_spec', undefined, `${file}: "http" must be an object`);
  const { config, problems } = parseConfigurableHeaders(
    (http as Record<string, unknown>).configurable_headers,
    `${file}: http.configurable_headers`,
  );
  if (problems.length > 0) throw new GraphLoadError('invalid_spec', undefined, problems.join('; '));
  return config ? { configurableHeaders: config } : {};
}

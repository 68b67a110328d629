// A service of this repository's built-in components, in the test's process: the YAML a user would
// write, validated and started with the components of the `tracepipe` command
// (distribution/components.ts) that it names, as the command line loads them. The tests that run
// several plugins together (the trace explorer over a real pipeline, the HTTP guards and TLS of
// every server) start theirs here, so no plugin's tests need another plugin.

import assert from 'node:assert/strict';
import {
  Registry,
  Service,
  componentKey,
  createMetricsRegistry,
  loadFactories,
  parseConfigText,
  referencedComponents,
  silentLogger,
  validateConfig,
} from 'tracepipe';
import { components } from '../../distribution/components.ts';

export interface StartedService {
  readonly service: Service;
  /** The first endpoint a component describes (`otlp`, `agent_api`, `trace_explorer`, ...). */
  endpoint(id: string): string;
}

/** The service `yaml` describes (paths relative to `dir`), validated but not started. */
export async function serviceFromYaml(yaml: string, dir: string): Promise<Service> {
  const data = parseConfigText(yaml);
  const referenced = referencedComponents(data);
  // Only what the config names is loaded, as the command line does: the agent server's module
  // brings LangGraph, which a proxy-only test need not import.
  const factories = await loadFactories(components, (entry) => referenced.has(componentKey(entry.kind, entry.type)));
  const { config, errors } = validateConfig(data, new Registry(factories), dir);
  assert.deepEqual(errors, [], errors.join('\n'));
  return new Service(config!, { logger: silentLogger(), metrics: createMetricsRegistry({ processMetrics: false }) });
}

/** Starts the service `yaml` describes (paths relative to `dir`), and tells where each component listens. */
export async function startService(yaml: string, dir: string): Promise<StartedService> {
  const service = await serviceFromYaml(yaml, dir);
  await service.start();
  return { service, endpoint: (id) => endpointOf(service, id) };
}

/** The first endpoint component `id` of a started service describes. */
export function endpointOf(service: Service, id: string): string {
  const url = service.describe().find((component) => component.id === id)?.endpoints?.[0]?.url;
  assert.ok(url, `component ${id} describes an endpoint`);
  return url;
}

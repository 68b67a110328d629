// The explorer's tests run it as users do: inside a whole service assembled from YAML (a receiver,
// the genai and batch processors, the local exporter and the explorer over the same store file).
// This starts one from the components a test names and tells where each of them listens.

import assert from 'node:assert/strict';
import { parseConfigText, validateConfig } from '../../../../src/config/load.ts';
import type { Factory } from '../../../../src/pipeline/component.ts';
import { Registry } from '../../../../src/pipeline/registry.ts';
import { Service } from '../../../../src/pipeline/service.ts';
import { silentLogger } from '../../../../src/telemetry/logger.ts';
import { createMetricsRegistry } from '../../../../src/telemetry/metrics.ts';

export interface StartedService {
  readonly service: Service;
  /** The first endpoint a component describes (`otlp`, `agent_api`, `trace_explorer`, ...). */
  endpoint(id: string): string;
}

/** Validates `yaml` (paths relative to `dir`) against `factories`, then starts the service. */
export async function startService(yaml: string, dir: string, factories: readonly Factory[]): Promise<StartedService> {
  const { config, errors } = validateConfig(parseConfigText(yaml), new Registry(factories), dir);
  assert.deepEqual(errors, []);
  const service = new Service(config!, {
    logger: silentLogger(),
    metrics: createMetricsRegistry({ processMetrics: false }),
  });
  await service.start();
  const described = service.describe();
  return {
    service,
    endpoint(id) {
      const url = described.find((component) => component.id === id)?.endpoints?.[0]?.url;
      assert.ok(url, `component ${id} describes an endpoint`);
      return url;
    },
  };
}

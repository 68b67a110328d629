// The `otlp` receiver's own metrics: requests by outcome, and spans refused for invalid ids (the
// latter in the framework's shared dropped-items counter, so dashboards find every drop in one place).

import type { Registry } from 'prom-client';
import { componentCounters, counter } from '../../../../src/telemetry/metrics.ts';

export function receiverMetrics(registry: Registry, componentId: string) {
  const requests = counter<'component_id' | 'encoding' | 'status_code'>(registry, {
    name: 'tracepipe_otlp_receiver_requests_total',
    help: 'OTLP export requests answered, by request encoding and HTTP status.',
    labelNames: ['component_id', 'encoding', 'status_code'],
  });
  const { dropped } = componentCounters(registry);
  return {
    request(encoding: string, statusCode: number): void {
      requests.inc({ component_id: componentId, encoding, status_code: String(statusCode) });
    },
    rejectedSpans(count: number): void {
      dropped.inc(
        { component_id: componentId, component_kind: 'receiver', data_type: 'spans', reason: 'invalid_id' },
        count,
      );
    },
  };
}

export type ReceiverMetrics = ReturnType<typeof receiverMetrics>;

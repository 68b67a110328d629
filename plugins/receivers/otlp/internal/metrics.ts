// The `otlp` receiver's own metrics: requests by outcome, and spans refused for invalid ids (the
// latter in the framework's shared dropped-items counter, so dashboards find every drop in one place).

import type { ComponentMeter } from 'tracepipe/plugin';

export function receiverMetrics(meter: ComponentMeter) {
  const requests = meter.counter({
    name: 'tracepipe_otlp_receiver_requests_total',
    help: 'OTLP export requests answered, by request encoding (`grpc` for OTLP/gRPC) and HTTP status (for gRPC, the HTTP status OTLP pairs with the gRPC code).',
    labelNames: ['encoding', 'status_code'],
  });
  return {
    request(encoding: string, statusCode: number): void {
      requests.inc({ encoding, status_code: String(statusCode) });
    },
    rejectedSpans(count: number): void {
      meter.dropped('spans', 'invalid_id', count);
    },
  };
}

export type ReceiverMetrics = ReturnType<typeof receiverMetrics>;

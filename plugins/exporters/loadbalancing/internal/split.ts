// Splits one span batch into one batch per endpoint, keeping each span under its own resource and
// scope. By trace id, every span of a trace lands in the same part wherever it sits in the batch;
// by service, a whole resource goes to one endpoint.

import type { ResourceSpans, ScopeSpans, Span, SpanBatch } from 'tracepipe/plugin';
import { findAttribute } from 'tracepipe/plugin';
import type { HashRing } from './ring.ts';

export type RoutingKey = 'traceID' | 'service';

/** The service name a resource carries (`""` when none: such resources share one endpoint). */
export function serviceOf(resourceSpans: ResourceSpans): string {
  const value = findAttribute(resourceSpans.resource.attributes, 'service.name');
  return value?.type === 'string' ? value.value : '';
}

/**
 * The parts of `batch` by endpoint. Throws nothing; an empty ring gives an empty map. A batch whose
 * spans all go to one endpoint is returned as is (no copy), the common case for small requests.
 */
export function splitByEndpoint(batch: SpanBatch, routingKey: RoutingKey, ring: HashRing): Map<string, SpanBatch> {
  const parts = new Map<string, SpanBatch>();
  if (ring.size === 0) return parts;
  if (routingKey === 'service') {
    const byEndpoint = new Map<string, ResourceSpans[]>();
    for (const resourceSpans of batch.resourceSpans) {
      const endpoint = ring.locate(serviceOf(resourceSpans))!;
      let list = byEndpoint.get(endpoint);
      if (!list) byEndpoint.set(endpoint, (list = []));
      list.push(resourceSpans);
    }
    for (const [endpoint, resourceSpans] of byEndpoint) parts.set(endpoint, { resourceSpans });
    return parts;
  }
  // Trace ids repeat within a batch (a trace's spans usually travel together): look each up once.
  const owners = new Map<string, string>();
  const ownerOf = (span: Span): string => {
    let endpoint = owners.get(span.traceId);
    if (endpoint === undefined) owners.set(span.traceId, (endpoint = ring.locate(span.traceId)!));
    return endpoint;
  };
  // One endpoint only (one endpoint configured, or one trace): no copy.
  let only: string | undefined;
  let single = true;
  for (const resourceSpans of batch.resourceSpans)
    for (const scopeSpans of resourceSpans.scopeSpans)
      for (const span of scopeSpans.spans) {
        const endpoint = ownerOf(span);
        if (only === undefined) only = endpoint;
        else if (endpoint !== only) single = false;
      }
  if (only === undefined) return parts;
  if (single) {
    parts.set(only, batch);
    return parts;
  }
  const building = new Map<string, ResourceSpans[]>();
  for (const resourceSpans of batch.resourceSpans) {
    const scopesByEndpoint = new Map<string, ScopeSpans[]>();
    for (const scopeSpans of resourceSpans.scopeSpans) {
      const spansByEndpoint = new Map<string, Span[]>();
      for (const span of scopeSpans.spans) {
        const endpoint = ownerOf(span);
        let spans = spansByEndpoint.get(endpoint);
        if (!spans) spansByEndpoint.set(endpoint, (spans = []));
        spans.push(span);
      }
      for (const [endpoint, spans] of spansByEndpoint) {
        let scopes = scopesByEndpoint.get(endpoint);
        if (!scopes) scopesByEndpoint.set(endpoint, (scopes = []));
        scopes.push({ ...scopeSpans, spans });
      }
    }
    for (const [endpoint, scopeSpans] of scopesByEndpoint) {
      let list = building.get(endpoint);
      if (!list) building.set(endpoint, (list = []));
      list.push({ ...resourceSpans, scopeSpans });
    }
  }
  for (const [endpoint, resourceSpans] of building) parts.set(endpoint, { resourceSpans });
  return parts;
}

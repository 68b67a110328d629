// The deterministic id of a graph's system assistant, computed as the reference server does, so
// that clients (and stored data) see the same assistant id for a graph on either server.

import { v5 as uuidv5 } from 'uuid';

/**
 * The reference's `NAMESPACE_GRAPH`. It is not one of RFC 4122's standard namespaces (it differs
 * from NAMESPACE_URL in one digit), so it must be spelled out rather than imported.
 */
export const GRAPH_ASSISTANT_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

/** uuid5 of the graph id in the reference's namespace, e.g. `agent` → `fe096781-5601-53d2-b2f6-0d3403f7e9ca`. */
export function systemAssistantId(graphId: string): string {
  return uuidv5(graphId, GRAPH_ASSISTANT_NAMESPACE);
}

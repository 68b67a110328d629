// What the agent server's acceptance files share: one server per file, the patterns the API's
// resources follow, and small readers of run values.

import { useTestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { JsonObject } from '../../plugins/receivers/agent_api/testing/types.ts';
import { messagesOf } from '../../plugins/receivers/agent_api/testing/types.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** ISO 8601 with a UTC offset, as the API's resources carry them. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A JSON object read off the wire; the assertions check it field by field. */
export type Json = JsonObject;

/**
 * A run on `sleep` that stays in flight until it is stopped: for servers in another process (the
 * CLI), or stopped by the server itself (time limits, shutdown). In-process tests hold runs at a
 * gate instead (plugins/receivers/agent_api/testing/gates.ts).
 */
export const longSleep = { delay_ms: 60_000, steps: 600 };

export const hello = (content = 'hello') => ({ messages: [{ role: 'user', content }] });

/** One server for the whole file (started before its tests, stopped after them). */
export function useSharedServer(onStart: (server: TestServer) => void): void {
  // The webhook tests' receivers listen on loopback, which webhooks may only reach when allowed.
  useTestServer(onStart, { webhooks: { allow: ['loopback'] } } as never);
}

/** The text of the last message in run or state values (the content as JSON when it is not text). */
export function lastAiText(values: unknown): string {
  const messages = messagesOf(values);
  const last = messages[messages.length - 1]!;
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

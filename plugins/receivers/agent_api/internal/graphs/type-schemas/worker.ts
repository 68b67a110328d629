// Worker entry of static schema extraction (./index.ts starts it): extracts the schemas of the
// graphs in `workerData` and posts one message per graph, then exits.

import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { extractTypeSchemas } from './extract.ts';
import type { ExtractionResult, TypeSchemaTarget } from './extract.ts';

/**
 * The extraction is background work of seconds of CPU, started as the server begins to take
 * requests: at the lowest priority, the event loop's thread gets the cores first when they are
 * busy (the first runs after a start on a small machine). On Linux a thread's nice value is its
 * own, set through its thread id (which /proc/thread-self names); elsewhere setting it would lower
 * the whole server, so it is left as it is, as it is when the system refuses.
 */
function lowerOwnPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, constants.priority.PRIORITY_LOW);
  } catch {
    // no /proc, or not allowed: the extraction runs at the server's priority
  }
}

lowerOwnPriority();
const targets = workerData as TypeSchemaTarget[];
const posted = new Set<string>();
try {
  extractTypeSchemas(targets, (result) => {
    posted.add(result.graphId);
    parentPort?.postMessage(result);
  });
} catch (error) {
  // A failure of the program as a whole (the compiler or the generator threw): every graph not
  // answered yet gets its message.
  const message = error instanceof Error ? error.message : String(error);
  for (const { graphId } of targets) {
    if (!posted.has(graphId)) parentPort?.postMessage({ graphId, error: message } satisfies ExtractionResult);
  }
}

// Worker entry of static schema extraction (./index.ts starts it): extracts the schemas of the
// graphs in `workerData` and posts one message per graph, then exits.

import { parentPort, workerData } from 'node:worker_threads';
import { extractTypeSchemas } from './extract.ts';
import type { ExtractionResult, TypeSchemaTarget } from './extract.ts';

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

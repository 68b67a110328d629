// Waiting on a run through the SDK, built on the test kit's `eventually`.

import assert from 'node:assert/strict';
import type { Client, Run } from '@langchain/langgraph-sdk';

type RunStatus = Run['status'];
import { eventually } from 'tracepipe/testing';

/** Resolves to the run once its status is `status` (or one of them); on timeout, says which it was. */
export async function runReaches(
  client: Client,
  threadId: string,
  runId: string,
  status: RunStatus | readonly RunStatus[],
): Promise<Run> {
  const wanted: readonly RunStatus[] = typeof status === 'string' ? [status] : status;
  return eventually(async () => {
    const run = await client.runs.get(threadId, runId);
    assert.ok(wanted.includes(run.status), `run ${runId} is ${run.status}, not ${wanted.join(' or ')}`);
    return run;
  });
}

// A graph whose only node fails: for the server's error paths (run status `error`, the stream's
// `error` event, the thread's `error` status). The input may delay the failure (`delay_ms`) and
// choose its message (`message`, default "Boo!").

import { END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

/** The error the graph throws; its name is what the stream's `error` event reports. */
export class CustomError extends Error {
  override readonly name = 'CustomError';
}

const ErrorState = new StateSchema({
  message: z.string().default('Boo!'),
  delay_ms: z.number().int().min(0).default(0),
});

async function fail(state: typeof ErrorState.State, runtime: Runtime): Promise<never> {
  if (state.delay_ms > 0) await sleep(state.delay_ms, undefined, { signal: runtime.signal });
  throw new CustomError(state.message);
}

export const graph = new StateGraph(ErrorState)
  .addNode('fail', fail)
  .addEdge(START, 'fail')
  .addEdge('fail', END)
  .compile({ name: 'error' });

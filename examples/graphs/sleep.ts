// A slow graph for cancellation, multitasking and long-join tests: `work` sleeps `delay_ms` in
// `steps` equal parts (honouring the run's abort signal) and emits a `custom` stream event after
// each part, then answers "finished after <delay_ms> ms".

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

const SleepState = new StateSchema({
  messages: MessagesValue,
  delay_ms: z.number().int().min(0).default(1000),
  steps: z.number().int().min(1).default(1),
});

async function work(state: typeof SleepState.State, runtime: Runtime) {
  const part = state.delay_ms / state.steps;
  for (let step = 1; step <= state.steps; step++) {
    await sleep(part, undefined, { signal: runtime.signal });
    runtime.writer?.({ step, of: state.steps });
  }
  return { messages: [new AIMessage(`finished after ${state.delay_ms} ms`)] };
}

export const graph = new StateGraph(SleepState)
  .addNode('work', work)
  .addEdge(START, 'work')
  .addEdge('work', END)
  .compile({ name: 'sleep' });

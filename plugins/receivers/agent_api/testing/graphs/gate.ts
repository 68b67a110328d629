// A test graph that holds its run at a gate until the test opens it (see ../gates.ts): `pass`
// writes a `custom` event `{ gate, at: 'reached' }`, waits at the gate named by the input's `gate`
// (honouring the run's abort signal, so cancel, interrupt and rollback stop it), writes
// `{ gate, at: 'passed' }`, and answers "passed <gate>". A gate that is never opened keeps the
// run in flight until something stops it.

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { z } from 'zod';
import { gateNamed } from '../gates.ts';

const GateState = new StateSchema({
  messages: MessagesValue,
  gate: z.string(),
});

async function pass(state: typeof GateState.State, runtime: Runtime) {
  const gate = gateNamed(state.gate);
  runtime.writer?.({ gate: gate.name, at: 'reached' });
  await gate.pass(runtime.signal);
  runtime.writer?.({ gate: gate.name, at: 'passed' });
  return { messages: [new AIMessage(`passed ${gate.name}`)] };
}

export const graph = new StateGraph(GateState)
  .addNode('pass', pass)
  .addEdge(START, 'pass')
  .addEdge('pass', END)
  .compile({ name: 'gate' });

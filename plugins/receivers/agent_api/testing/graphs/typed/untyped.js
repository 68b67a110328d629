// An `Annotation` graph in plain JavaScript: no types to read, so its schemas list its channels.

import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({ topic: Annotation(), notes: Annotation() });

export const graph = new StateGraph(State)
  .addNode('note', () => ({ notes: 'noted' }))
  .addEdge(START, 'note')
  .addEdge('note', END)
  .compile();

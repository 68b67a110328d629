// A test graph that logs through the LangGraph SDK's logger, as deployments written for the
// LangGraph platform do: `getLogger()` at import time (which throws unless the server registered
// one) and a log line with fields from its node.

import { getLogger } from '@langchain/langgraph-sdk/logging';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const logger = getLogger();
logger.info('logging graph imported');

const State = Annotation.Root({ topic: Annotation<string> });

export const graph = new StateGraph(State)
  .addNode('log', (state) => {
    logger.warn('node saw a topic', { topic: state.topic });
    return {};
  })
  .addEdge(START, 'log')
  .addEdge('log', END)
  .compile();

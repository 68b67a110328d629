// A test graph that answers the settings its run was given: `model` from the runtime context and
// `model_name` from the run config's `configurable`, as deployments read their assistant's
// defaults.

import { Annotation, START, StateGraph } from '@langchain/langgraph';

const Settings = Annotation.Root({
  model: Annotation<string | undefined>(),
  model_name: Annotation<string | undefined>(),
});

export const graph = new StateGraph(Settings, Annotation.Root({ model: Annotation<string>() }))
  .addNode('read_settings', (_, runtime) => ({
    model: runtime.context?.model,
    model_name: (runtime.configurable as Record<string, unknown> | undefined)?.model_name as string | undefined,
  }))
  .addEdge(START, 'read_settings')
  .compile();

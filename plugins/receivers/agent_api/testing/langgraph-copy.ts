// For tests: a project folder with a copy of the server's `@langchain/langgraph` of its own, as a
// project's own `node_modules` beside a server installed elsewhere gives (the server's graph
// loading notices graphs built with it: internal/graphs/load.ts, `builtWithAnotherLangGraph`).

import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { serverLangGraphDir } from '../internal/graphs/load.ts';

/**
 * A project of its own in `dir`: a copy of the server's `@langchain/langgraph`
 * (a second module instance, as another `node_modules` gives), its dependencies linked to the
 * server's (one `@langchain/core`), and a graph module built with the copy, `graph.mjs`, exporting
 * `graph` (compiled) and `stateGraph` (a builder) that append `!` to `text`. Returns its path.
 */
export function projectWithItsOwnLangGraph(dir: string): string {
  const serverModules = join(dirname(serverLangGraphDir()), '..');
  const modules = join(dir, 'node_modules');
  cpSync(serverLangGraphDir(), join(modules, '@langchain', 'langgraph'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(serverLangGraphDir(), 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(serverModules, name), join(modules, name), 'dir');
  }
  const graphFile = join(dir, 'graph.mjs');
  writeFileSync(
    graphFile,
    [
      "import { Annotation, END, START, StateGraph } from '@langchain/langgraph';",
      'const State = Annotation.Root({ text: Annotation() });',
      "const builder = () => new StateGraph(State).addNode('echo', (state) => ({ text: `${state.text}!` })).addEdge(START, 'echo').addEdge('echo', END);",
      'export const graph = builder().compile();',
      'export const stateGraph = builder();',
    ].join('\n'),
  );
  return graphFile;
}

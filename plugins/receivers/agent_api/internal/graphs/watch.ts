// Watch mode (`tracepipe --watch`): reloads the graphs when a file in their folders changes, as
// `langgraph dev` does. The server, its storage and its threads stay; runs in flight finish on the
// graph they started with; a graph that no longer loads leaves the previous graphs serving. A
// reload re-imports the graph files and their local imports (see `load.ts`), not the packages.

import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import type { Logger } from 'pino';
import type { GraphRegistry } from './registry.ts';
import type { GraphSpec } from './spec.ts';

const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx|json)$/;
const DEBOUNCE_MS = 150;

/** The folders holding the graph files, without those inside another one. */
export function watchedFolders(specs: readonly GraphSpec[]): string[] {
  const folders = [...new Set(specs.map((spec) => dirname(spec.path)))].sort();
  return folders.filter(
    (folder) => !folders.some((other) => other !== folder && !relative(other, folder).startsWith('..')),
  );
}

/** Starts watching; returns the function that stops it. */
export function watchGraphs(
  graphs: GraphRegistry,
  specs: () => readonly GraphSpec[],
  logger: Logger,
  onReload?: () => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();
  const changed = new Set<string>();
  const reload = () => {
    const files = [...changed];
    changed.clear();
    reloading = reloading.then(async () => {
      try {
        const current = specs();
        await graphs.reload(current);
        logger.info({ files, graphs: graphs.ids() }, 'Graphs reloaded.');
        onReload?.();
      } catch (error) {
        logger.error(
          { files, error: error instanceof Error ? error.message : String(error) },
          'Could not reload the graphs; the previous ones keep serving.',
        );
      }
    });
  };
  const watchers: FSWatcher[] = watchedFolders(specs()).map((folder) =>
    watch(folder, { recursive: true }, (_event, file) => {
      const name = file?.toString() ?? '';
      if (!SOURCE.test(name) || name.split(sep).includes('node_modules')) return;
      changed.add(name);
      clearTimeout(timer);
      timer = setTimeout(reload, DEBOUNCE_MS);
    }),
  );
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}

// Watch mode (`tracepipe --watch`): reloads the graphs when a file in their folders changes, written
// in place or replaced, as `langgraph dev` does. The server, its storage and its threads stay; runs
// in flight finish on the graph they started with; a graph that no longer loads leaves the previous
// graphs serving. A reload re-imports the graph files and their local imports (see `load.ts`), not
// the packages.

import { readdirSync, statSync, watch } from 'node:fs';
import type { Dirent, FSWatcher } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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
  const onChange = (name: string) => {
    if (!SOURCE.test(name)) return;
    changed.add(name);
    clearTimeout(timer);
    timer = setTimeout(reload, DEBOUNCE_MS);
  };
  const stops = watchedFolders(specs()).map((folder) => watchTree(folder, onChange, logger));
  return () => {
    clearTimeout(timer);
    for (const stop of stops) stop();
  };
}

/**
 * Watches a folder and its subfolders (not `node_modules` or hidden ones) for changes to the names
 * in them, calling `onChange` with the path relative to `root`.
 *
 * Hand-written rather than `fs.watch(root, { recursive: true })`: on Linux, Node 20 implements the
 * recursive mode by watching every file on its own, and a watch on a file follows its inode. A save
 * that replaces the file (`sed -i`, and editors that write a copy and rename it over the original)
 * leaves that watch on the deleted inode, so only the first such save per file was seen. A watch on
 * each folder is told about every name written or renamed into it, whatever the inode.
 */
function watchTree(root: string, onChange: (name: string) => void, logger: Logger): () => void {
  const watchers = new Map<string, FSWatcher>();
  const add = (folder: string) => {
    if (watchers.has(folder)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, (_event, file) => {
        const name = file?.toString();
        if (!name) return;
        const path = join(folder, name);
        if (isWatchedFolder(path, name)) add(path); // a new subfolder: watch it too
        onChange(relative(root, path));
      });
    } catch (error) {
      // Removed between listing and watching: nothing left to watch there.
      logger.debug({ folder, err: error }, 'Could not watch a folder.');
      return;
    }
    watcher.on('error', () => {
      watcher.close();
      watchers.delete(folder);
    });
    watchers.set(folder, watcher);
    for (const entry of safeReaddir(folder)) {
      if (entry.isDirectory() && isWatchedName(entry.name)) add(join(folder, entry.name));
    }
  };
  add(root);
  return () => {
    for (const watcher of watchers.values()) watcher.close();
    watchers.clear();
  };
}

function isWatchedName(name: string): boolean {
  return name !== 'node_modules' && !name.startsWith('.');
}

function isWatchedFolder(path: string, name: string): boolean {
  if (!isWatchedName(name)) return false;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function safeReaddir(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}

// The files a config names (a component's `namedFiles`), checked before anything starts: a config
// copied to another folder validates only when what its relative paths point at is there too.
// Reads only the files' metadata; the components read the contents when they start.

import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ServiceConfig } from './load.ts';

/** One error per named file that is missing, unreadable or a folder, prefixed by its config path. */
export function checkNamedFiles(config: ServiceConfig): string[] {
  const errors: string[] = [];
  const sections = [
    ['receivers', config.receivers],
    ['processors', config.processors],
    ['exporters', config.exporters],
    ['extensions', config.extensions],
  ] as const;
  for (const [section, components] of sections) {
    for (const component of components.values()) {
      for (const file of component.factory.namedFiles?.(component.config as never) ?? []) {
        const path = resolve(config.baseDir, file.path);
        const problem = unreadable(path);
        if (problem) errors.push(`${section}.${component.id}.${file.key}: cannot read ${path} (${problem})`);
      }
    }
  }
  return errors;
}

function unreadable(path: string): string | undefined {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isDirectory() ? 'a folder, not a file' : undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

// The schemas read from graphs' types, kept on disk so that a restart does not read them again
// (the compiler costs seconds of CPU and hundreds of MB for a few graphs). One JSON file per graph
// under the cache directory; an entry is used only when everything the schemas were read from is
// unchanged: the graph module and the project files it imports (content hashes), the tsconfig.json
// and the lock file found from the graph's directory up, the typescript and
// typescript-json-schema versions, and this extraction's own code. Anything else (a missing,
// corrupt or stale file) is a miss: the graph is read again and its entry rewritten. Entries are
// written whole to a temporary file and renamed, so a crash never leaves half an entry.

import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GraphTypeSchemas, SourceHashes, TypeSchemaTarget } from './extract.ts';
import { contentHash, fileHash } from './source-files.ts';

/** Bumped when an entry's layout changes. */
const FORMAT = 1;

interface CacheEntry {
  readonly format: number;
  readonly target: TypeSchemaTarget;
  readonly environment: string;
  readonly files: SourceHashes;
  readonly schemas: GraphTypeSchemas;
}

/** Lock files, in the order a directory's are hashed; npm's hidden one changes with every install. */
const LOCK_FILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
  'node_modules/.package-lock.json',
];

export class TypeSchemaCache {
  private readonly environments = new Map<string, string>();

  constructor(private readonly directory: string) {}

  /** The graph's schemas as last read, when nothing they were read from has changed. */
  async read(target: TypeSchemaTarget): Promise<GraphTypeSchemas | undefined> {
    let entry: CacheEntry;
    try {
      entry = JSON.parse(await readFile(this.entryPath(target), 'utf8')) as CacheEntry;
    } catch {
      return undefined;
    }
    const valid =
      typeof entry === 'object' &&
      entry !== null &&
      entry.format === FORMAT &&
      sameTarget(entry.target, target) &&
      entry.environment === this.environment(target.path) &&
      typeof entry.files === 'object' &&
      entry.files !== null &&
      target.path in entry.files &&
      Object.entries(entry.files).every(([path, hash]) => fileHash(path) === hash) &&
      typeof entry.schemas === 'object' &&
      entry.schemas !== null;
    return valid ? entry.schemas : undefined;
  }

  /** Keeps the graph's schemas, read from `files`, for the next start. */
  async write(target: TypeSchemaTarget, schemas: GraphTypeSchemas, files: SourceHashes): Promise<void> {
    const entry: CacheEntry = { format: FORMAT, target, environment: this.environment(target.path), files, schemas };
    const path = this.entryPath(target);
    const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await mkdir(this.directory, { recursive: true });
    try {
      await writeFile(temporary, JSON.stringify(entry));
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /** The entry's file: named by the graph (id, module, export), so that graphs never share one. */
  entryPath(target: TypeSchemaTarget): string {
    const name = contentHash(JSON.stringify([target.graphId, target.path, target.exportName])).slice(0, 32);
    return join(this.directory, `${name}.json`);
  }

  /** What the graph's schemas depend on besides its own files, as one hash (per directory). */
  private environment(graphPath: string): string {
    const directory = dirname(graphPath);
    let hash = this.environments.get(directory);
    if (hash === undefined) {
      const tsconfig = findUp(directory, ['tsconfig.json']);
      const locks = findUp(directory, LOCK_FILES);
      hash = contentHash(
        JSON.stringify({
          compiler: extractorVersions(),
          tsconfig: tsconfig.map((path) => [path, fileHash(path)]),
          locks: locks.map((path) => [path, fileHash(path)]),
        }),
      );
      this.environments.set(directory, hash);
    }
    return hash;
  }
}

function sameTarget(a: TypeSchemaTarget | undefined, b: TypeSchemaTarget): boolean {
  return a?.graphId === b.graphId && a.path === b.path && a.exportName === b.exportName;
}

/** The files named `names` in the nearest directory, from `directory` up, that has any of them. */
function findUp(directory: string, names: readonly string[]): string[] {
  for (let current = directory; ; current = dirname(current)) {
    const found = names.map((name) => join(current, name)).filter((path) => existsSync(path));
    if (found.length > 0 || dirname(current) === current) return found;
  }
}

let extractor: unknown;

/**
 * The compiler's and the generator's versions, and the hashes of the extraction's own modules (a
 * change to how schemas are read makes every entry stale). Read once, from the packages'
 * manifests, without loading the packages.
 */
function extractorVersions(): unknown {
  extractor ??= readExtractorVersions();
  return extractor;
}

function readExtractorVersions(): unknown {
  const require = createRequire(import.meta.url);
  const version = (name: string) => {
    try {
      const main = require.resolve(name);
      const manifest = findUp(dirname(main), ['package.json'])[0];
      return manifest ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version : undefined;
    } catch {
      return undefined;
    }
  };
  const here = fileURLToPath(import.meta.url);
  const ownModules = ['extract', 'reflect', 'subgraph-sites', 'source-files'].map((name) =>
    fileHash(join(dirname(here), `${name}${extname(here)}`)),
  );
  return { typescript: version('typescript'), generator: version('typescript-json-schema'), ownModules };
}

// Small helpers shared by the framework's tests.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Factory } from '../src/pipeline/component.ts';

export { tempDir } from '../src/testkit/files.ts';

/** Writes `text` to `name` inside `dir` and returns the path. */
export function writeFile(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const anySchema = { type: 'object', additionalProperties: false, properties: { port: { type: 'integer' } } };

/** Minimal factories for graph checks: one per kind and data type. */
export function stubFactory(
  kind: Factory['kind'],
  type: string,
  io: { consumes?: 'spans' | 'runs' | 'any'; produces?: 'spans' | 'runs' | 'any'; listens?: boolean } = {},
): Factory {
  const lifecycle = { start: async () => {}, shutdown: async () => {}, mutatesData: false, consume: async () => {} };
  const base = {
    kind,
    type,
    stability: 'stable' as const,
    description: `stub ${kind} ${type}`,
    configSchema: anySchema,
    create: () => lifecycle,
    ...(io.listens ? { listenAddresses: (config: { port?: number }) => [`127.0.0.1:${config.port ?? 4318}`] } : {}),
  };
  if (kind === 'receiver') return { ...base, kind, produces: io.produces ?? 'spans' } as Factory;
  if (kind === 'processor')
    return { ...base, kind, consumes: io.consumes ?? 'spans', produces: io.produces ?? 'spans' } as Factory;
  return { ...base, kind, consumes: io.consumes ?? 'spans' } as Factory;
}

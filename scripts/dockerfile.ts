// What the Dockerfile's final stage (the runtime image) says about how tracepipe starts: read by
// test/package.test.ts, which runs the image's entry command from the packed package, and by the
// benchmarks, which start tracepipe with the image's allocator settings.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ImageStart {
  readonly workdir: string;
  readonly env: Record<string, string>;
  readonly entrypoint: string[];
  readonly cmd: string[];
  readonly healthcheck: string[];
  readonly user: string | undefined;
  readonly volumes: string[];
}

/** The final stage of the Dockerfile at `root`: its WORKDIR, ENV, ENTRYPOINT, CMD, HEALTHCHECK command, USER and VOLUMEs. */
export function readImageStart(root: string): ImageStart {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM /m);
  const final = stages.at(-1)!;
  const instruction = (name: string) =>
    [...final.matchAll(new RegExp(`^${name}\\s+(.*)$`, 'gm'))].map((match) => match[1]!.trim());
  const env: Record<string, string> = {};
  for (const line of instruction('ENV')) for (const [, key, value] of line.matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
  const healthcheck = instruction('HEALTHCHECK')[0]!;
  return {
    workdir: instruction('WORKDIR').at(-1)!,
    env,
    entrypoint: JSON.parse(instruction('ENTRYPOINT')[0]!) as string[],
    cmd: JSON.parse(instruction('CMD')[0]!) as string[],
    healthcheck: JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3).trim()) as string[],
    user: instruction('USER').at(-1),
    volumes: instruction('VOLUME'),
  };
}

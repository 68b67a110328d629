// What the runtime image carries: no compiler toolchain (the build stage's python3, make and g++
// stay there), no devDependency of package-lock.json, no test files and no source maps — and how
// much it adds to its base (scripts/container/README.md reports it; the bound here catches a
// regression such as devDependencies or build trees slipping back in).
//
// The image is built by scripts/container/build.sh (.ci/run does it before the tests).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DockerLab, IMAGE, REPO_ROOT, containerSkipReason, docker, dockerResult } from '../support/docker.ts';

const skip = containerSkipReason();
/** The base the Dockerfile names (an offline stand-in here: scripts/container/base-image.sh). */
const BASE = 'node:20-bookworm-slim';
/** What the app may add to its base. Measured: see scripts/container/README.md. */
const MAX_ADDED_BYTES = 140_000_000;

describe('the runtime image', { skip }, () => {
  const lab = new DockerLab();
  after(() => lab.cleanup());

  /** Runs a shell command in a throwaway container of the image; resolves with its output. */
  async function inImage(script: string): Promise<string> {
    const name = `${lab.prefix}-probe`;
    lab.adopt(name);
    const result = await dockerResult([
      'run',
      '--rm',
      '--name',
      name,
      '--network',
      'host',
      '--read-only',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      script,
    ]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  }

  it('carries no compiler toolchain', async () => {
    const found = await inImage(
      'for tool in gcc g++ cc c++ clang make cmake python3 python ld as node-gyp; do command -v $tool || true; done',
    );
    assert.equal(found.trim(), '', `toolchain in the image:\n${found}`);
  });

  it('carries no devDependency, no test files and no source maps', async () => {
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev && path.startsWith('node_modules/'))
      .map(([path]) => path);
    assert.ok(devOnly.includes('node_modules/eslint'), 'the lock names eslint as a devDependency');
    const listed = await inImage('cd /app && find node_modules -mindepth 1 -maxdepth 3 -type d');
    const present = new Set(listed.split('\n'));
    assert.deepEqual(
      devOnly.filter((path) => present.has(path)),
      [],
      'devDependencies in /app',
    );
    const tests = await inImage(
      "find /app \\( -name '*.test.*' -o -name '*.spec.*' -o -name '*.map' \\) -print -o -type d \\( -name test -o -name tests -o -name __tests__ \\) -print",
    );
    assert.equal(tests.trim(), '', `test files or source maps in the image:\n${tests}`);
    // tracepipe itself: the packed package (dist/), not the repository's sources and tests.
    const tracepipe = await inImage('ls /app/node_modules/tracepipe');
    assert.deepEqual(tracepipe.trim().split('\n').sort(), [
      'README.md',
      'bin',
      'configs',
      'dist',
      'docs',
      'examples',
      'package.json',
      'scripts',
    ]);
  });

  it(`adds less than ${MAX_ADDED_BYTES / 1e6} MB to its base`, async () => {
    const size = Number(await docker(['image', 'inspect', '--format', '{{.Size}}', IMAGE]));
    const base = Number(await docker(['image', 'inspect', '--format', '{{.Size}}', BASE]));
    assert.ok(size - base < MAX_ADDED_BYTES, `the image adds ${((size - base) / 1e6).toFixed(1)} MB to ${BASE}`);
  });
});

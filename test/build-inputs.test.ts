// scripts/build-inputs.mjs decides both what the build reads and when bin/tracepipe.js judges dist/
// stale: an edit to a README or a test must leave dist/ current, an edit to a source, an asset the
// build copies or a tsconfig must not.

import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../src/testkit/files.ts';
import { newestBuildInput, walkBuildInputs } from '../scripts/build-inputs.mjs';

const BUILT = [
  'distribution/main.ts',
  'plugins/receivers/ui/static/page.html',
  'plugins/receivers/ui/index.ts',
  'src/index.ts',
];
const NOT_BUILT = [
  'plugins/receivers/ui/README.md',
  'plugins/receivers/ui/ui.test.ts',
  'plugins/receivers/ui/testdata/request.json',
  'plugins/receivers/ui/testing/stub.ts',
  'src/fixtures/config.yaml',
  'src/node_modules/dependency/index.ts',
];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];
const BASE_SECONDS = 1_700_000_000;

function checkout(): string {
  const root = tempDir('tracepipe-build-inputs-');
  for (const file of [...BUILT, ...NOT_BUILT, ...CONFIGS]) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), '');
    utimesSync(join(root, file), BASE_SECONDS, BASE_SECONDS);
  }
  return root;
}

function touch(root: string, file: string, seconds: number): void {
  utimesSync(join(root, file), seconds, seconds);
}

describe('build inputs', () => {
  it('walks the sources and assets, not tests, test data or documentation', () => {
    const root = checkout();
    const seen: string[] = [];
    for (const dir of ['src', 'plugins', 'distribution'])
      walkBuildInputs(join(root, dir), (path: string) => seen.push(relative(root, path)));
    assert.deepEqual(seen.sort(), [...BUILT].sort());
  });

  it('a newer README, test or test data file leaves the newest input unchanged', () => {
    const root = checkout();
    assert.equal(newestBuildInput(root), BASE_SECONDS * 1000);
    NOT_BUILT.forEach((file, index) => touch(root, file, BASE_SECONDS + 10 + index));
    assert.equal(newestBuildInput(root), BASE_SECONDS * 1000);
  });

  for (const file of [...BUILT, ...CONFIGS]) {
    it(`a newer ${file} is the newest input`, () => {
      const root = checkout();
      touch(root, file, BASE_SECONDS + 60);
      assert.equal(newestBuildInput(root), (BASE_SECONDS + 60) * 1000);
    });
  }
});

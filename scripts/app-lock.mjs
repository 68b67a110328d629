#!/usr/bin/env node
// Sets up a directory where `npm ci --omit=dev` installs packed tracepipe (and plugin) tarballs
// with exactly the dependency versions of this repository's package-lock.json: it writes the
// directory's package.json (depending on each tarball) and a package-lock.json derived from ours
// (the production entries as they are, plus one entry per tarball). That makes the install
// reproducible and lets it run from npm's cache alone (`--offline`): with no lock, npm would
// first fetch every dependency's metadata from the registry.
//
// The container image is built this way (Dockerfile), and so is the test that reproduces the
// image's layout (test/package.test.ts).
//
//   node scripts/app-lock.mjs <dir> <tarball.tgz> [<tarball.tgz> ...]
//   cd <dir> && npm ci --omit=dev

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The scripts npm runs when it installs a package (`prepare` only for one that is not from a registry). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/** The package.json inside a packed tarball. */
function manifestOf(tarball) {
  return JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
}

/** Writes `<dir>/package.json` and `<dir>/package-lock.json`; returns the dependency names. */
export function writeAppLock(dir, tarballs, name = 'tracepipe-app') {
  mkdirSync(dir, { recursive: true });
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const dependencies = {};
  const packages = {};
  // A packed package's own install-time scripts (tracepipe's `prepare` builds dist/ from sources)
  // have nothing to do: it comes built. npm matches a tarball by its spec, not by its name.
  const packedScripts = {};
  for (const tarball of tarballs) {
    const manifest = manifestOf(tarball);
    const spec = `file:${relative(resolve(dir), resolve(tarball))}`;
    if (INSTALL_SCRIPTS.some((script) => manifest.scripts?.[script])) packedScripts[spec] = false;
    dependencies[manifest.name] = spec;
    const entry = {
      version: manifest.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
    };
    for (const key of ['license', 'dependencies', 'optionalDependencies', 'peerDependencies', 'bin', 'engines']) {
      if (manifest[key] !== undefined) entry[key] = manifest[key];
    }
    packages[`node_modules/${manifest.name}`] = entry;
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    // The root, dev-only packages, and links (this repository's link to itself) stay out.
    if (path === '' || entry.dev || entry.link || packages[path]) continue;
    packages[path] = entry;
  }
  // npm applies only the root project's overrides: without ours, `npm ci` finds the lock's
  // overridden versions out of step with the ranges their dependents ask for, and refuses. It reads
  // only the root's allowScripts too: without ours, an install that runs scripts runs every
  // dependency's, each with a warning that it was not reviewed.
  const { overrides, allowScripts: ours } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const allowScripts = { ...ours, ...packedScripts };
  const manifest = { name, private: true, dependencies, ...(overrides ? { overrides } : {}) };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ ...manifest, allowScripts }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name, lockfileVersion: 3, requires: true, packages: { '': manifest, ...packages } }, null, 2)}\n`,
  );
  return Object.keys(dependencies);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, ...tarballs] = process.argv.slice(2);
  if (!dir || tarballs.length === 0) {
    console.error('usage: node scripts/app-lock.mjs <dir> <tarball.tgz> [<tarball.tgz> ...]');
    process.exit(2);
  }
  console.log(
    `${join(dir, 'package-lock.json')}: ${writeAppLock(dir, tarballs).join(', ')} (${tarballs.map((t) => basename(t)).join(', ')})`,
  );
}

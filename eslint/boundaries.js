// A lint rule for the repository's module boundaries, checked on resolved paths (like
// eslint-plugin-import's `no-restricted-paths`, without the dependency):
//
//   - src/ is the framework: it imports nothing from plugins/, distribution/, examples/, test/,
//     bench/ or scripts/ (the CLI gets its components from the distribution module);
//   - plugins/ and examples/ reach the framework only through its public entry points (the source
//     files package.json's `exports` name: src/plugin.ts for `tracepipe/plugin`, ...), as a plugin
//     package outside the repository must, so that the built-in components are built on what a
//     plugin author gets;
//   - a plugin (plugins/<kind>s/<type>/) does not import another plugin, in its code or its tests:
//     what two plugins share belongs behind a public entry point of src/, and a plugin's tests
//     exercise it alone, with the test kit's stand-ins (`tracepipe/testing`). Tests that assemble
//     several components live in test/, with the distribution. Nothing in plugins/ imports
//     distribution/;
//   - nothing outside test/ imports test/;
//   - a directory with a package.json of its own (examples/redact-processor/) is a package: it
//     reaches tracepipe through the `tracepipe/*` exports, never through relative paths out of it.
//
// Options: `{ root: <absolute repository path>, allow: [{ from: <dir prefix>, to: <dir prefix> }] }`.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const FRAMEWORK_FORBIDDEN = ['plugins', 'distribution', 'examples', 'test', 'bench', 'scripts'];

/** `plugins/exporters/otlp/x.ts` → `plugins/exporters/otlp`; undefined outside a plugin. */
function pluginOf(path) {
  const parts = path.split('/');
  return parts[0] === 'plugins' && parts.length >= 4 ? parts.slice(0, 3).join('/') : undefined;
}

/** The nearest directory below the root with its own package.json, for `path`; undefined: none. */
function packageDirOf(root, path, cache) {
  let dir = dirname(path);
  while (dir !== '.' && dir !== '') {
    if (!cache.has(dir)) cache.set(dir, existsSync(join(root, dir, 'package.json')));
    if (cache.get(dir)) return dir;
    dir = dirname(dir);
  }
  return undefined;
}

/** The source files of the package's entry points (`tracepipe-source` of package.json's exports). */
function entryPointsOf(root) {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return new Set(
    Object.values(exports)
      .filter((target) => typeof target === 'object' && target['tracepipe-source'])
      .map((target) => target['tracepipe-source'].replace(/^\.\//, '')),
  );
}

const entryPointsByRoot = new Map();

/** A test module: `*.test.ts`, or under a `testing/` or `testdata/` folder. */
function isTestModule(path) {
  return path.endsWith('.test.ts') || /\/(testing|testdata)\//.test(path);
}

function within(path, dir) {
  return path === dir || path.startsWith(`${dir}/`);
}

export const boundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Keep the framework, the plugins, the tests and example packages apart.' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          allow: {
            type: 'array',
            items: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } } },
          },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const options = context.options[0] ?? {};
    const root = options.root ?? context.cwd;
    const allow = options.allow ?? [];
    const packageDirs = new Map();
    if (!entryPointsByRoot.has(root)) entryPointsByRoot.set(root, entryPointsOf(root));
    const entryPoints = entryPointsByRoot.get(root);
    const file = relative(root, context.filename).split(sep).join('/');
    if (file.startsWith('..')) return {};

    function check(node, specifier) {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = relative(root, resolve(dirname(context.filename), specifier))
        .split(sep)
        .join('/');
      if (allow.some((rule) => within(file, rule.from) && within(target, rule.to))) return;
      const report = (message) => context.report({ node, message: `${message} (${specifier})` });

      const area = file.split('/')[0];
      const targetArea = target.split('/')[0];
      if (area === 'src' && FRAMEWORK_FORBIDDEN.includes(targetArea)) {
        return report(
          `src/ is the framework and must not import ${targetArea}/; components reach the CLI through distribution/components.ts`,
        );
      }
      if (targetArea === 'test' && area !== 'test') {
        return report(
          'only test/ may import test/; shared test helpers belong in the test kit (src/testkit/, `tracepipe/testing`)',
        );
      }
      if ((area === 'plugins' || area === 'examples') && targetArea === 'src' && !entryPoints.has(target)) {
        return report(
          `${area}/ reaches the framework only through its public entry points (${[...entryPoints].join(', ')}), not ${target}`,
        );
      }
      const plugin = pluginOf(file);
      if (plugin && targetArea === 'distribution') return report('a plugin must not import the distribution module');
      const targetPlugin = pluginOf(target);
      if (plugin && targetPlugin && plugin !== targetPlugin) {
        return report(
          isTestModule(file)
            ? `a plugin's tests must not import another plugin (${target}); use a stand-in from tracepipe/testing, or test the components together under test/`
            : `a plugin must not import another plugin (${target}); what two plugins share belongs behind a public entry point of src/`,
        );
      }
      const ownPackage = packageDirOf(root, file, packageDirs);
      if (ownPackage && !within(target, ownPackage)) {
        return report(
          `${ownPackage}/ is a package of its own: import tracepipe through its exports (tracepipe/plugin, tracepipe/testing, ...)`,
        );
      }
    }

    const fromSource = (node) => check(node, node.source?.value);
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source.value : undefined),
    };
  },
};

export default { rules: { boundaries } };

// Lint rules that catch real bugs; layout is Prettier's (`npm run format`, checked in CI).
import tseslint from 'typescript-eslint';
import tracepipe from './eslint/boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', '**/*.js', '**/*.mjs', '**/public/**', '**/ui/dist/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, tracepipe },
    rules: {
      // Module boundaries (eslint/boundaries.js): src/ never imports plugins/, plugins and examples
      // reach src/ only through its public entry points, plugins never import each other (not
      // even in their tests: tests of several components together live in test/), nothing
      // outside test/ imports test/, example packages use exports.
      'tracepipe/boundaries': [
        'error',
        {
          root: import.meta.dirname,
          // No exceptions: what two areas share moves to a module both may import.
          allow: [],
        },
      ],
      // A promise nobody awaits loses its error; in a pipeline that means lost data.
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises that the runner itself tracks.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // `any` switches the type checker off wherever it flows; read unknown JSON through `unknown`
      // and a narrowing helper instead.
      '@typescript-eslint/no-explicit-any': 'error',
      // A module's public surface is what it names; `export *` re-exports whatever is added later.
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ExportAllDeclaration',
          message: 'Name what a module re-exports (`export { a, b } from`), so its surface changes only on purpose.',
        },
      ],
    },
  },
  {
    // Tests start processes through src/testkit/processes.ts (spawnGroup, runGroup): each in a
    // process group of its own, killed with whatever it started however the test ends (its teardown,
    // a timeout, an interrupted run). spawnSync and execFileSync stay allowed for one-shot commands
    // with a timeout, which end before the test goes on.
    files: ['test/**/*.ts', '**/*.test.ts', 'plugins/**/testing/**/*.ts', 'examples/**/*.ts'],
    ignores: [
      // The Docker and docker-compose CLIs, each call bounded by a timeout; what they start is the
      // daemon's, labelled and removed by the tests.
      'test/support/docker.ts',
      'test/container/**',
      // mount and umount of the fault tests' small filesystems: commands that start nothing.
      'test/faults/harness.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'node:child_process',
              importNames: ['spawn', 'fork', 'exec', 'execFile'],
              message: 'Start processes in tests with spawnGroup or runGroup (src/testkit/processes.ts).',
            },
          ],
        },
      ],
    },
  },
);

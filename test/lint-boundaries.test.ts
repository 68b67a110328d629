// The module boundaries are enforced by the lint config (eslint/boundaries.js, configured in
// eslint.config.js): deliberate violations must fail, the allowed imports must pass.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('..', import.meta.url));

// The repository's own config; only the type-aware rules (which need a TypeScript program, and are
// not about boundaries) are switched off, so each case lints in milliseconds.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
});

async function boundaryErrors(file: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import * as probe from '${specifier}';\nexport { probe };\n`, {
    filePath: join(root, file),
  });
  const fatal = result!.messages.filter((message) => message.fatal);
  assert.deepEqual(fatal, [], `${file} did not parse`);
  return result!.messages
    .filter((message) => message.ruleId === 'tracepipe/boundaries')
    .map((message) => message.message);
}

describe('lint: module boundaries', () => {
  const violations: [string, string, RegExp][] = [
    [
      'src/cli/probe.ts',
      '../../plugins/exporters/debug/index.ts',
      /src\/ is the framework and must not import plugins\//,
    ],
    ['src/cli/probe.ts', '../../distribution/components.ts', /must not import distribution\//],
    ['src/probe.ts', '../test/helpers.ts', /must not import test\//],
    ['plugins/exporters/otlp/probe.ts', '../../receivers/otlp/config.ts', /must not import another plugin/],
    [
      'plugins/exporters/otlp/internal/probe.ts',
      '../../../processors/batch/internal/outbox.ts',
      /must not import another plugin/,
    ],
    ['plugins/exporters/loadbalancing/probe.ts', '../otlp/index.ts', /must not import another plugin/],
    // Not even a plugin's tests: they use the test kit's stand-ins, or move to test/.
    [
      'plugins/processors/genai/probe.test.ts',
      '../../receivers/otlp/config.ts',
      /tests must not import another plugin .*tracepipe\/testing.*test\//,
    ],
    ['plugins/processors/genai/probe.test.ts', '../../receivers/otlp/index.ts', /tests must not import another plugin/],
    [
      'plugins/extensions/trace_explorer/testing/probe.ts',
      '../../../exporters/local/index.ts',
      /tests must not import another plugin/,
    ],
    ['plugins/exporters/debug/probe.test.ts', '../../../test/helpers.ts', /only test\/ may import test\//],
    [
      'plugins/exporters/debug/probe.ts',
      '../../../distribution/components.ts',
      /must not import the distribution module/,
    ],
    ['bench/pipeline/probe.ts', '../../test/helpers.ts', /only test\/ may import test\//],
    ['bench/faults/probe.ts', '../../test/faults/harness.ts', /only test\/ may import test\//],
    ['scripts/probe.ts', '../test/helpers.ts', /only test\/ may import test\//],
    ['examples/redact-processor/probe.ts', '../../src/plugin.ts', /is a package of its own/],
    // The framework's internals, past its public entry points.
    [
      'plugins/exporters/otlp/probe.ts',
      '../../../src/exporterhelper/queued_exporter.ts',
      /only through its public entry points .*not src\/exporterhelper\/queued_exporter\.ts/,
    ],
    [
      'plugins/receivers/otlp/probe.test.ts',
      '../../../src/otlp/decode-json.ts',
      /only through its public entry points/,
    ],
    ['examples/graphs/probe.ts', '../../src/model/runs.ts', /only through its public entry points/],
  ];
  for (const [file, specifier, expected] of violations) {
    it(`fails: ${file} importing ${specifier}`, async () => {
      const errors = await boundaryErrors(file, specifier);
      assert.equal(errors.length, 1, `expected one boundary error, got ${JSON.stringify(errors)}`);
      assert.match(errors[0]!, expected);
    });
  }

  const allowed: [string, string][] = [
    ['src/cli/probe.ts', '../pipeline/service.ts'],
    ['plugins/exporters/otlp/probe.ts', 'tracepipe/exporterhelper'],
    ['plugins/exporters/otlp/probe.ts', '../../../src/otlp.ts'],
    ['plugins/exporters/otlp/probe.ts', './internal/encode.ts'],
    ['plugins/processors/genai/probe.test.ts', 'tracepipe/testing'],
    // Tests of several components together, with the distribution.
    ['test/pipelines/probe.test.ts', '../../plugins/receivers/otlp/index.ts'],
    ['test/support/probe.ts', '../../distribution/components.ts'],
    ['distribution/probe.ts', '../plugins/receivers/otlp/index.ts'],
    ['test/probe.test.ts', '../plugins/exporters/backend/internal/multipart_reader.ts'],
    // A plugin's testing/ folder is its test surface for end-to-end tests.
    ['test/agent-api/probe.test.ts', '../../plugins/receivers/agent_api/testing/test-server.ts'],
    ['examples/redact-processor/probe.ts', 'tracepipe/plugin'],
    ['examples/redact-processor/probe.ts', './config.ts'],
  ];
  for (const [file, specifier] of allowed) {
    it(`passes: ${file} importing ${specifier}`, async () => {
      assert.deepEqual(await boundaryErrors(file, specifier), []);
    });
  }
});

describe('lint: how tests start processes', () => {
  async function processErrors(file: string, names: string): Promise<string[]> {
    const [result] = await eslint.lintText(
      `import { ${names} } from 'node:child_process';\nexport const probe = [${names}];\n`,
      { filePath: join(root, file) },
    );
    return result!.messages
      .filter((message) => message.ruleId === 'no-restricted-imports')
      .map((message) => message.message);
  }

  for (const [file, name] of [
    ['test/probe.test.ts', 'spawn'],
    ['plugins/receivers/agent_api/probe.test.ts', 'fork'],
    ['plugins/receivers/agent_api/testing/probe.ts', 'execFile'],
  ]) {
    it(`fails: ${file} importing ${name}`, async () => {
      const errors = await processErrors(file!, name!);
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.match(errors[0]!, /spawnGroup or runGroup/);
    });
  }

  for (const [file, names] of [
    ['test/probe.test.ts', 'spawnSync, execFileSync'],
    ['src/cli/probe.ts', 'spawn'],
    ['test/support/docker.ts', 'execFile'],
  ]) {
    it(`passes: ${file} importing ${names}`, async () => {
      assert.deepEqual(await processErrors(file!, names!), []);
    });
  }
});

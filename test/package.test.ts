// The package as its users get it. One `npm pack` of tracepipe and of each example plugin, one
// install of them all with production dependencies only — the container image's layout (Dockerfile:
// scripts/app-lock.mjs, then `npm ci --omit=dev`) — and then, from that install:
//   - the image's exact entry command (ENTRYPOINT + CMD, WORKDIR and ENV read from the Dockerfile)
//     starts, answers /live and /ready and the HEALTHCHECK command, and stops cleanly on SIGTERM;
//   - a pipeline that uses the example processor, loaded by package name, redacts what it should,
//     and one that uses the example receiver takes NDJSON spans through its journal;
//   - `tracepipe/testing` runs the plugins' conformance suites, and a TypeScript consumer of every
//     entry point type-checks against the emitted declarations.
// The install runs from npm's cache (`--offline`); when the cache cannot serve it (no `npm ci` ran
// on this machine), the tests are skipped with that reason.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../src/testkit/files.ts';
import { runGroup, spawnGroup } from '../src/testkit/processes.ts';
import { writeAppLock } from '../scripts/app-lock.mjs';
import { readImageStart } from '../scripts/dockerfile.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = tempDir('tracepipe-package-');
const app = join(work, 'app');
let skipReason: string | undefined;
/** The example plugins that are packages of their own (examples/<name>/package.json). */
const EXAMPLE_PACKAGES = ['redact-processor', 'ndjson-receiver'];

/** npm in a process group of its own (`npm pack` runs the build, which runs tsc). */
async function npm(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  const result = await runGroup('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd });
  return { ok: result.code === 0, output: `${result.stdout}${result.stderr}` };
}

before(async () => {
  const pack = await npm(['pack', '--pack-destination', work], root);
  assert.ok(pack.ok, pack.output);
  for (const example of EXAMPLE_PACKAGES) {
    const packed = await npm(['pack', '--pack-destination', work], join(root, 'examples', example));
    assert.ok(packed.ok, packed.output);
  }
  const tarballs = readdirSync(work)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => join(work, name));
  assert.equal(tarballs.length, 1 + EXAMPLE_PACKAGES.length);
  writeAppLock(app, tarballs, 'tracepipe-test-app');
  // Install scripts stay off: the native addons were compiled for this machine when the repository
  // was installed, and are copied below (the image compiles its own in its build stage).
  const install = await npm(['ci', '--omit=dev', '--offline', '--ignore-scripts'], app);
  if (!install.ok) {
    if (/ENOTCACHED|only-if-cached/.test(install.output)) {
      skipReason = 'npm’s cache cannot serve an offline install of the production dependencies (run `npm ci` first)';
      return;
    }
    assert.fail(install.output);
  }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!entry.hasInstallScript || entry.dev || !existsSync(join(root, path, 'build'))) continue;
    cpSync(join(root, path, 'build'), join(app, path, 'build'), { recursive: true });
  }
  // npm trusts its record of the install (node_modules/.package-lock.json) only while it is newer
  // than every package folder; the copies above changed some, and npm would read the tree from disk
  // instead, where a tarball dependency loses the spec that allowScripts names it by.
  const now = new Date();
  utimesSync(join(app, 'node_modules/.package-lock.json'), now, now);
});

/** Starts a tracepipe process; resolves with its listening port once everything is ready. */
function startTracepipe(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const { child, exited } = spawnGroup(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = new Promise<number>((resolve, reject) => {
    let port: number | undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      output += `${line}\n`;
      const address = /"address":"[^"]*:(\d+)"/.exec(line);
      if (address && /"msg":"Receiving (OTLP traces|NDJSON spans)\."/.test(line)) port = Number(address[1]);
      if (/Everything is ready/.test(line)) resolve(port ?? 0);
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, ready, exited, output: () => output };
}

describe('the packed package, installed with production dependencies only', () => {
  it('holds no devDependency and no TypeScript sources of tracepipe', (t) => {
    if (skipReason) return t.skip(skipReason);
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages).filter(
      ([path, entry]) => entry.dev && path.startsWith('node_modules/'),
    );
    // eslint: a devDependency for good (typescript is a runtime one, for the graph type reader).
    assert.ok(devOnly.some(([path]) => path === 'node_modules/eslint'));
    assert.deepEqual(
      devOnly.filter(([path]) => existsSync(join(app, path))).map(([path]) => path),
      [],
    );
    const tracepipe = join(app, 'node_modules/tracepipe');
    assert.ok(existsSync(join(tracepipe, 'dist/distribution/main.js')));
    assert.ok(!existsSync(join(tracepipe, 'src')), 'the package ships dist/, not src/');
    assert.ok(!existsSync(join(tracepipe, 'plugins')), 'the package ships dist/, not plugins/');
  });

  it('leaves no install script unreviewed: package.json’s allowScripts, carried by scripts/app-lock.mjs', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const pending = await npm(['install-scripts', 'ls'], app);
    assert.ok(pending.ok, pending.output);
    assert.match(pending.output, /^No packages with unreviewed install scripts\.$/m);
  });

  it('starts with the container’s entry command, answers /live, /ready and the HEALTHCHECK, and stops cleanly', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const image = readImageStart(root);
    assert.equal(image.entrypoint[0], 'node', 'node itself is the entry point, so SIGTERM reaches tracepipe');
    assert.ok(image.user && image.user !== 'root', 'the image runs as a non-root user');
    assert.ok(
      image.volumes.some((volume) => volume.includes(image.env.DATA_DIR!)),
      'DATA_DIR is a volume',
    );
    // The image's paths, moved into the temporary layout; the port is any free one.
    const local = (value: string) => value.replace(new RegExp(`^${image.workdir}(?=/|$)`), app);
    const dataDir = join(work, 'data');
    mkdirSync(dataDir);
    const env = {
      ...process.env,
      ...image.env,
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      SERVICE_API_KEY: 'test-key',
    };
    const [command, ...args] = [...image.entrypoint, ...image.cmd].map(local);
    const proxy = startTracepipe(command!, args, { cwd: local(image.workdir), env });
    try {
      const port = await proxy.ready;
      const live = await fetch(`http://127.0.0.1:${port}/live`);
      assert.equal(live.status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${port}/ready`)).status, 200);
      const [healthCommand, ...healthArgs] = image.healthcheck;
      const health = spawnSync(healthCommand!, healthArgs, {
        env: { ...env, HTTP_PORT: String(port) },
        timeout: 10_000,
      });
      assert.equal(health.status, 0, `HEALTHCHECK failed: ${health.stderr}`);
    } finally {
      proxy.child.kill('SIGTERM');
    }
    assert.equal(await proxy.exited, 0, proxy.output());
    assert.match(proxy.output(), /Stopped cleanly/);
    assert.doesNotMatch(proxy.output(), /Component is in development/, 'the proxy loads no agent server');
  });

  it('runs a pipeline with the example plugin, loaded by package name', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const out = join(work, 'redacted.jsonl');
    writeFileSync(
      join(app, 'pipeline.yaml'),
      `plugins: [tracepipe-processor-redact]
receivers:
  otlp: { port: 0, require_api_key: false }
processors:
  redact: { patterns: ["sk-[a-z0-9]+"], keys: [user.id] }
exporters:
  file: { path: ${JSON.stringify(out)} }
service:
  telemetry: { logs: { format: json } }
  pipelines:
    traces: { receivers: [otlp], processors: [redact], exporters: [file] }
`,
    );
    const run = startTracepipe(join(app, 'node_modules/.bin/tracepipe'), ['--config', 'pipeline.yaml'], {
      cwd: app,
      env: process.env,
    });
    try {
      const port = await run.ready;
      const body = {
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] },
            scopeSpans: [
              {
                scope: { name: 'test' },
                spans: [
                  {
                    traceId: '0102030405060708090a0b0c0d0e0f10',
                    spanId: '0102030405060708',
                    name: 'chat',
                    kind: 3,
                    startTimeUnixNano: '1700000000000000000',
                    endTimeUnixNano: '1700000001000000000',
                    attributes: [
                      { key: 'prompt', value: { stringValue: 'my key is sk-abc123' } },
                      { key: 'user.id', value: { intValue: '42' } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      };
      const response = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.text());
    } finally {
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.exited, 0, run.output());
    const written = readFileSync(out, 'utf8');
    assert.match(written, /my key is \[REDACTED\]/);
    assert.doesNotMatch(written, /sk-abc123/);
    assert.match(written, /\{"key":"user.id","value":\{"stringValue":"\[REDACTED\]"\}\}/);
  });

  it('runs a pipeline with the example journaled receiver, loaded by package name', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const out = join(work, 'ndjson.jsonl');
    writeFileSync(
      join(app, 'ndjson.yaml'),
      `plugins: [tracepipe-receiver-ndjson]
receivers:
  ndjson: { port: 0, journal: { enabled: true, directory: ${JSON.stringify(join(work, 'ndjson-journal'))} } }
exporters:
  file: { path: ${JSON.stringify(out)} }
service:
  telemetry: { logs: { format: json } }
  pipelines:
    traces: { receivers: [ndjson], exporters: [file] }
`,
    );
    const run = startTracepipe(join(app, 'node_modules/.bin/tracepipe'), ['--config', 'ndjson.yaml'], {
      cwd: app,
      env: process.env,
    });
    try {
      const port = await run.ready;
      const span = {
        trace_id: '0af7651916cd43dd8448eb211c80319c',
        span_id: 'b7ad6b7169203331',
        name: 'invoke_agent packaged',
        start_time_unix_nano: '1700000000000000000',
        end_time_unix_nano: '1700000002000000000',
      };
      const response = await fetch(`http://127.0.0.1:${port}/v1/spans`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', 'x-api-key': 'k' },
        body: `${JSON.stringify(span)}\n`,
      });
      assert.equal(response.status, 202, await response.text());
    } finally {
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.exited, 0, run.output());
    assert.match(readFileSync(out, 'utf8'), /invoke_agent packaged/);
  });

  it('offers tracepipe/testing to plugin tests, and typed entry points to TypeScript', async (t) => {
    if (skipReason) return t.skip(skipReason);
    writeFileSync(
      join(app, 'kit.test.mjs'),
      `import { configFor, runComponentConformance, makeBatch, plainSpan } from 'tracepipe/testing';
import factory from 'tracepipe-processor-redact';
import ndjson from 'tracepipe-receiver-ndjson';
runComponentConformance(factory, { sample: () => makeBatch([plainSpan()]) });
runComponentConformance(ndjson, { config: () => configFor(ndjson, { port: 0 }) });
`,
    );
    // Without NODE_TEST_CONTEXT, which would make the child report to this test runner.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // In a group: the test runner runs the file in a process of its own.
    const kit = await runGroup(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', 'kit.test.mjs'], {
      cwd: app,
      env,
      timeoutMs: 120_000,
    });
    assert.equal(kit.code, 0, `${kit.stdout}${kit.stderr}`);
    assert.match(kit.stdout, /# pass [1-9]/);

    writeFileSync(
      join(app, 'consumer.ts'),
      `import { Registry, Service, loadConfigFile, runCommandLine } from 'tracepipe';
import type { Catalog, ServiceConfig } from 'tracepipe';
import { PermanentError, holdDelivery } from 'tracepipe/plugin';
import type { ComponentKind, ProcessorFactory, RequestContext, SpanBatch } from 'tracepipe/plugin';
import { QueuedExporter, httpVerdict } from 'tracepipe/exporterhelper';
import { Sink, configFor, makeBatch } from 'tracepipe/testing';

const kind: ComponentKind = 'processor';
// @ts-expect-error -- a typo must not type-check (it would, were the declarations missing: any)
const typo: ComponentKind = 'procesor';
const catalog: Catalog = [];
const context: RequestContext = { project: 'p' };
const batch: SpanBatch = makeBatch([]);
const release: () => void = holdDelivery(context.delivery);
export const uses = [Registry, Service, loadConfigFile, runCommandLine, PermanentError, QueuedExporter, httpVerdict, Sink, configFor, kind, typo, catalog, batch, release];
export type Uses = [ServiceConfig, ProcessorFactory];
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    // tsc is one process that starts no other: a plain child with a timeout cannot outlive the test.
    const tsc = spawnSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(app, 'tsconfig.json')],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    assert.equal(tsc.status, 0, `the entry points' declarations do not type-check for a consumer:\n${tsc.stdout}`);
  });
});

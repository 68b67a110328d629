// What a new user meets in their first minutes with `tracepipe`, run as a child process: errors
// that suggest the fix, the config file as a plain argument, a hint for `${…}` in flow style, no
// stack traces at the default log level, and a start that says where everything answers.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../src/testkit/files.ts';
import { spawnGroup } from '../src/testkit/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/tracepipe.js');
const localConfig = join(root, 'configs/local.yaml');

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function write(text: string, name = 'pipeline.yaml'): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

/** Environment for configs/local.yaml: free ports, a fresh data directory. */
function localEnv(): NodeJS.ProcessEnv {
  return {
    AGENT_API_PORT: '0',
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    LANGSMITH_PORT: '0',
    TRACE_EXPLORER_PORT: '0',
    DATA_DIR: tempDir('tracepipe-first-run-'),
    LOG_LEVEL: 'info',
  };
}

/** Starts tracepipe; resolves with every stdout line up to the one `until` matches. */
function start(args: string[], env: NodeJS.ProcessEnv, until: RegExp) {
  const { child } = spawnGroup(process.execPath, [bin, ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      output += `${line}\n`;
      if (until.test(line)) resolve(output);
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, ready, exited, output: () => output };
}

describe('tracepipe: errors that teach', () => {
  it('suggests the closest component type, key and value, without knock-on errors; the code heads the list', () => {
    const config = write(`receivers:
  otlp: { port: 0 }
processors:
  genia: {}
  batch: { flush_intervl_ms: 5 }
exporters:
  debug: { verbosity: detaild }
service:
  pipelines:
    traces: { receivers: [otlp], processors: [genia, batch], exporters: [debug] }
`);
    const result = run(['validate', config]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      'tracepipe: invalid configuration [TP_ERR_CONFIG_INVALID]:\n' +
        '  processors.genia: unknown processor type "genia" (known: batch, genai, memory_limiter); did you mean "genai"?\n' +
        '  processors.batch.flush_intervl_ms: unknown key; did you mean "flush_interval_ms"?\n' +
        '  exporters.debug.verbosity: must be one of "basic", "detailed"; did you mean "detailed"?\n',
    );
  });

  it('takes the config file as an argument of validate and run, as --config', () => {
    const valid = run(['validate', localConfig]);
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(valid.stdout, /local\.yaml: valid \(2 pipeline\(s\), 7 component\(s\)\)/);
    const both = run(['validate', localConfig, '--config', join(root, 'configs/proxy.yaml')]);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /two config files given/);
    const missing = run(['run', join(tempDir(), 'nope.yaml')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^tracepipe: cannot read config file .*nope\.yaml: ENOENT \[TP_ERR_CONFIG_READ\]\n$/);
  });

  it('explains quoting or block style for ${…} in a flow mapping, in one hint line', () => {
    const config = write(`receivers:
  otlp: { port: \${MYPORT} }
exporters:
  debug: {}
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [debug] }
`);
    const result = run(['validate', config], { MYPORT: '4318' });
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 2, result.stderr);
    assert.match(lines[0]!, /^tracepipe: .*pipeline\.yaml:2:\d+: .* \[TP_ERR_CONFIG_PARSE\]$/);
    assert.match(lines[1]!, /^tracepipe: hint: .*\$\{MYPORT\}.*quoted.*block style/);
    // Written in block style, the same config is valid and the port stays a number.
    const block = write(`receivers:
  otlp:
    port: \${MYPORT}
exporters:
  debug: {}
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [debug] }
`);
    assert.equal(run(['validate', block], { MYPORT: '4318' }).code, 0);
  });

  it('prints no stack trace at the default level when a port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const result = run(['run', localConfig], { ...localEnv(), HTTP_PORT: String(port) });
      assert.equal(result.code, 1);
      const output = `${result.stdout}${result.stderr}`;
      assert.doesNotMatch(output, /"stack"|\n\s+at \S+ \(/, output);
      assert.match(result.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use \\[TP_ERR_START\\]`));
      assert.match(result.stderr, /hint: .*HTTP_PORT=<free port>/);
      assert.doesNotMatch(output, /Server listening at/);
    } finally {
      blocker.close();
    }
  });
});

describe('tracepipe: the start says where everything is', () => {
  it('logs one line with every listener’s URL and purpose, each of which answers', async () => {
    const env = localEnv();
    const tracepipe = start(['run', localConfig], env, /"msg":"Listening\."/);
    try {
      const output = await tracepipe.ready;
      const line = JSON.parse(output.trim().split('\n').at(-1)!) as {
        endpoints: { component: string; url: string; purpose: string }[];
        details: Record<string, Record<string, string>>;
      };
      const purposes = line.endpoints.map((endpoint) => `${endpoint.component}: ${endpoint.purpose}`);
      assert.deepEqual(purposes, [
        'agent_api: Agent API (LangGraph SDK apiUrl)',
        'agent_api: Web UI',
        'agent_api: API reference',
        'agent_api: Prometheus metrics',
        'otlp: OTLP/HTTP traces',
        'otlp: OTLP/gRPC traces',
        'otlp: Prometheus metrics',
        'langsmith: LangSmith SDK ingest (LANGSMITH_ENDPOINT)',
        'trace_explorer: Trace explorer',
        'trace_explorer: Trace query API',
      ]);
      for (const { url, purpose } of line.endpoints) {
        // An HTTP/2 gRPC listener, which plugins/receivers/otlp/grpc.test.ts calls with gRPC clients.
        if (purpose === 'OTLP/gRPC traces') continue;
        // The LangSmith ingest endpoint is a base URL; the SDKs read its /info first.
        const target = purpose.startsWith('LangSmith') ? `${url}/info` : url;
        const response = await fetch(target, purpose.startsWith('OTLP') ? { method: 'POST' } : {});
        // The OTLP endpoint answers an empty POST as a bad request; everything else with a page.
        assert.ok(
          purpose.startsWith('OTLP') ? response.status === 400 || response.status === 415 : response.ok,
          `${purpose} ${url}: ${response.status}`,
        );
        await response.arrayBuffer();
      }
      assert.equal(line.details.agent_api!['data directory'], join(env.DATA_DIR!, 'agent'));
      assert.match(line.details.agent_api!.graphs!, /^agent, chat, tools/);
      assert.equal(line.details.agent_api!.auth, 'none (no key needed)');
      assert.equal(line.details.local!['trace store'], join(env.DATA_DIR!, 'traces.db'));
      assert.doesNotMatch(output, /Server listening at/, 'one line per listener, not Fastify’s');
    } finally {
      tracepipe.child.kill('SIGTERM');
    }
    assert.equal(await tracepipe.exited, 0, tracepipe.output());
  });

  it('prints a banner when the logs are for people', async () => {
    const tracepipe = start(
      ['run', localConfig, '--set', 'service.telemetry.logs.format=pretty'],
      { ...localEnv(), AGENT_API_KEY: 'k1' },
      /Stop with Ctrl\+C/,
    );
    try {
      const output = await tracepipe.ready;
      const ui = /^ {4}Web UI +(http:\/\/127\.0\.0\.1:\d+\/ui\/)$/m.exec(output);
      assert.ok(ui, output);
      assert.match(output, /^ {2}tracepipe \S+ is ready \(.*local\.yaml\)$/m);
      assert.match(output, /^ {4}OTLP\/HTTP traces +http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/m);
      assert.match(output, /^ {4}auth +API key \(X-Api-Key, 1 configured\)$/m);
      const page = await fetch(ui[1]!);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
    } finally {
      tracepipe.child.kill('SIGTERM');
    }
    assert.equal(await tracepipe.exited, 0, tracepipe.output());
  });
});

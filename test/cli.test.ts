// The `tracepipe` command, run as a real child process.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir, writeFile } from './helpers.ts';
import { spawnGroup } from '../src/testkit/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/tracepipe.js');
const journalPlugin = join(root, 'test/fixtures/journal-plugin.ts');
const redactPlugin = join(root, 'examples/redact-processor/index.ts');

function run(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Starts `tracepipe --config`, resolves once its log says the pipelines run. */
/** A pipeline of the journal plugin's receiver and `debug`, with metrics on their own listener. */
function metricsListenerConfig(dir: string, listen: string): string {
  return writeFile(
    dir,
    'p.yaml',
    `plugins: [${JSON.stringify(journalPlugin)}]
receivers: { journal_source: { journal: j.txt } }
exporters: { debug: {} }
service:
  telemetry: { metrics: { listen: ${JSON.stringify(listen)} } }
  pipelines: { traces: { receivers: [journal_source], exporters: [debug] } }
`,
  );
}

function start(config: string) {
  const { child } = spawnGroup(process.execPath, [bin, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('pipelines are running')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, ready, exited, output: () => output };
}

describe('tracepipe CLI', () => {
  it('prints its version and lists components', () => {
    const version = run(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    const list = run(['components']);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /^exporter\s+debug\s+any → ·/m);
    const table = run(['components', '--type', 'exporter/debug']);
    assert.match(table.stdout, /\| `verbosity` \| "basic" \\\| "detailed" \| `"basic"` \|/);
    const unknown = run(['components', '--type', 'exporter/nope']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no component exporter\/nope/);
  });

  it('lists the components a config’s plugins add', () => {
    const dir = tempDir();
    const config = writeFile(dir, 'p.yaml', `plugins: [${JSON.stringify(redactPlugin)}]\nservice: { pipelines: {} }\n`);
    const list = run(['components', '--config', config]);
    assert.match(list.stdout, /^processor\s+redact\s+spans → spans/m);
  });

  it('validate: exit 0 for a valid config, 1 with every error for an invalid one', () => {
    const dir = tempDir();
    const good = writeFile(
      dir,
      'good.yaml',
      `plugins: [${JSON.stringify(journalPlugin)}]
receivers: { journal_source: { journal: j.txt } }
exporters: { debug: {} }
service: { pipelines: { traces: { receivers: [journal_source], exporters: [debug] } } }
`,
    );
    const ok = run(['validate', '--config', good]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /valid \(1 pipeline\(s\), 2 component\(s\)\)/);

    const bad = run([
      'validate',
      '--config',
      good,
      '--set',
      'exporters.debug.verbosity=loud',
      '--set',
      'exporters.debug.colour=1',
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /exporters\.debug\.verbosity: must be one of "basic", "detailed"/);
    assert.match(bad.stderr, /exporters\.debug\.colour: unknown key/);
    assert.match(bad.stderr, /\[TP_ERR_CONFIG_INVALID\]/);

    const missing = run(['validate', '--config', join(dir, 'nope.yaml')]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.trim().split('\n').length, 1);
    assert.match(missing.stderr, /cannot read config file .*nope\.yaml: ENOENT/);
  });

  it('validate: every typo at once, no follow-on error suggesting a typo, and the files a config names', () => {
    const dir = tempDir();
    const local = readFileSync(join(root, 'configs/local.yaml'), 'utf8');
    const typos = local
      .replace('level: ${env:LOG_LEVEL:-info}', 'level: infoo')
      .replace(/^ {2}genai: \{\}$/m, '  genia: {}')
      .replace('flush_interval_ms: ${env:FLUSH_INTERVAL_MS:-1000}', 'flush_intervl_ms: 1000');
    assert.notEqual(typos, local);
    const graphs = `receivers.agent_api.langgraph_config=${join(root, 'examples/graphs/langgraph.json')}`;
    const result = run(['validate', writeFile(dir, 'typos.yaml', typos), '--set', graphs]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /service\.telemetry\.logs\.level: must be one of .*; did you mean "info"\?/);
    assert.match(result.stderr, /processors\.genia: unknown processor type "genia" .*; did you mean "genai"\?/);
    assert.match(result.stderr, /processors\.batch\.flush_intervl_ms: unknown key/);
    // The pipeline's "genai" is right; the section's key is the typo, and it is reported once.
    assert.doesNotMatch(result.stderr, /is not defined|did you mean "genia"/);

    // The same config copied to another folder: its relative langgraph.json is not there.
    const copied = run(['validate', writeFile(dir, 'local.yaml', local)]);
    assert.equal(copied.code, 1);
    assert.match(
      copied.stderr,
      /receivers\.agent_api\.langgraph_config: cannot read .*examples\/graphs\/langgraph\.json \(ENOENT\)/,
    );
    assert.equal(run(['validate', join(root, 'configs/local.yaml')]).code, 0);
  });

  it('the plugin guide’s example pipeline takes spans without a key, as its YAML says', async () => {
    const guide = readFileSync(join(root, 'docs/writing-a-plugin.md'), 'utf8');
    const yaml = [...guide.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((match) => match[1]!)
      .find((text) => text.includes('plugins: [tracepipe-processor-redact]'))!;
    const config = writeFile(
      tempDir(),
      'pipeline.yaml',
      yaml.replace('[tracepipe-processor-redact]', `[${JSON.stringify(redactPlugin)}]`),
    );
    const server = spawnGroup(process.execPath, [bin, '--config', config, '--set', 'receivers.otlp.port=0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let output = '';
        server.child.stderr.on('data', (chunk: Buffer) => (output += chunk));
        server.child.stdout.on('data', (chunk: Buffer) => {
          output += chunk;
          const line = output.split('\n').find((text) => text.includes('"msg":"Receiving OTLP traces."'));
          if (line) resolve((JSON.parse(line) as { address: string }).address);
        });
        void server.exited.then((code) => reject(new Error(`exited with ${code}: ${output}`)));
      });
      const response = await fetch(`http://${address}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceSpans: [] }),
      });
      assert.equal(response.status, 200, await response.text());
    } finally {
      await server.stop();
    }
  });

  it('runs until SIGTERM, then flushes held data and exits 0', async () => {
    const dir = tempDir();
    const config = writeFile(
      dir,
      'pipeline.yaml',
      `plugins: [${JSON.stringify(journalPlugin)}]
receivers: { journal_source: { journal: journal.txt, spans: 5 } }
processors: { journal_hold: { journal: journal.txt } }
exporters: { journal_sink: { journal: journal.txt } }
service:
  pipelines:
    traces: { receivers: [journal_source], processors: [journal_hold], exporters: [journal_sink] }
`,
    );
    const process = start(config);
    await process.ready;
    const beforeStop = readFileSync(join(dir, 'journal.txt'), 'utf8');
    assert.doesNotMatch(beforeStop, /export \d/, 'nothing is exported before the stop flushes it');
    process.child.kill('SIGTERM');
    assert.equal(await process.exited, 0, process.output());
    assert.deepEqual(readFileSync(join(dir, 'journal.txt'), 'utf8').trim().split('\n').slice(-4), [
      'receiver:journal_source:shutdown',
      'exporter:journal_sink:export 5',
      'processor:journal_hold:shutdown',
      'exporter:journal_sink:shutdown',
    ]);
  });

  it('runs a pipeline built from the example plugin and the file exporter', async () => {
    const dir = tempDir();
    const config = writeFile(
      dir,
      'pipeline.yaml',
      `plugins: [${JSON.stringify(journalPlugin)}, ${JSON.stringify(redactPlugin)}]
receivers:
  journal_source: { journal: journal.txt, spans: 2, attributes: { api_key: "key sk-live1234 here", user: alice } }
processors:
  redact: { patterns: ["sk-[a-z0-9]+"], keys: [user] }
exporters:
  file: { path: out/spans.jsonl }
service:
  pipelines:
    traces: { receivers: [journal_source], processors: [redact], exporters: [file] }
`,
    );
    const process = start(config);
    await process.ready;
    process.child.kill('SIGINT');
    assert.equal(await process.exited, 0, process.output());
    const lines = readFileSync(join(dir, 'out/spans.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!);
    const attributes = record.resourceSpans[0].scopeSpans[0].spans[0].attributes;
    assert.deepEqual(attributes, [
      { key: 'api_key', value: { stringValue: 'key [REDACTED] here' } },
      { key: 'user', value: { stringValue: '[REDACTED]' } },
    ]);
    assert.match(process.output(), /Component is in development/);
  });

  it('serves metrics on their own listener, other methods 405 with Allow, unknown paths 404', async () => {
    const dir = tempDir();
    const config = metricsListenerConfig(dir, '127.0.0.1:0');
    const process = start(config);
    try {
      await process.ready;
      const origin = /(http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(process.output())?.[1];
      assert.ok(origin, process.output());
      assert.equal((await fetch(`${origin}/metrics`)).status, 200);
      for (const [method, path] of [
        ['POST', '/metrics'],
        ['DELETE', '/live'],
      ] as const) {
        const answer = await fetch(`${origin}${path}`, { method });
        assert.equal(answer.status, 405, `${method} ${path}`);
        assert.equal(answer.headers.get('allow'), 'GET, HEAD');
        assert.deepEqual(await answer.json(), {
          statusCode: 405,
          error: 'Method Not Allowed',
          message: `method ${method} is not allowed on ${path}; use GET or HEAD`,
        });
      }
      const unknown = await fetch(`${origin}/nowhere`, { method: 'POST' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.headers.get('allow'), null);
      assert.deepEqual(await unknown.json(), {
        statusCode: 404,
        error: 'Not Found',
        message: 'no route for POST /nowhere',
      });
    } finally {
      process.child.kill('SIGTERM');
      assert.equal(await process.exited, 0, process.output());
    }
  });

  it('exits non-zero with a one-line reason when a port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const dir = tempDir();
      const config = metricsListenerConfig(dir, `127.0.0.1:${port}`);
      const result = run(['--config', config]);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        `tracepipe: port ${port} on 127.0.0.1 is already in use\n` +
          'tracepipe: hint: another process listens there; choose another port: pass --set service.telemetry.metrics.listen=<host:port>\n',
      );
    } finally {
      blocker.close();
    }
  });

  it('names the variable and the --set that move a receiver off a port in use, with no stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const dir = tempDir();
      const config = writeFile(
        dir,
        'p.yaml',
        `receivers:
  otlp:
    host: 127.0.0.1
    port: \${env:HTTP_PORT:-4318}
exporters: { debug: {} }
service: { pipelines: { traces: { receivers: [otlp], exporters: [debug] } } }
`,
      );
      const result = spawnSync(process.execPath, [bin, '--config', config], {
        encoding: 'utf8',
        env: { ...process.env, HTTP_PORT: String(port) },
      });
      assert.equal(result.status, 1);
      assert.equal(
        result.stderr,
        `tracepipe: component otlp failed to start: port ${port} on 127.0.0.1 is already in use [TP_ERR_START]\n` +
          'tracepipe: hint: another process listens there; choose another port: set HTTP_PORT=<free port>, or pass --set receivers.otlp.port=<free port>\n',
      );
      // The log says it once, in one line; the stack trace only at --log-level debug.
      assert.doesNotMatch(result.stdout, /"stack"|\n\s+at /);
      assert.match(
        result.stdout,
        /"error":"port \d+ on 127\.0\.0\.1 is already in use","msg":"Component failed to start; stopping\."/,
      );
    } finally {
      blocker.close();
    }
  });

  it('says how to move one of two components that claim the same port', () => {
    const dir = tempDir();
    const config = writeFile(
      dir,
      'p.yaml',
      `receivers:
  otlp:
    port: \${env:HTTP_PORT:-4318}
  otlp/second: { port: 4318 }
exporters: { debug: {} }
service: { pipelines: { traces: { receivers: [otlp, otlp/second], exporters: [debug] } } }
`,
    );
    const result = run(['validate', '--config', config]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /receivers\.otlp\/second: listens on 127\.0\.0\.1:4318, which receivers\.otlp already uses/,
    );
    assert.match(
      result.stderr,
      /tracepipe: hint: two components claim port 4318; move one: pass --set receivers\.otlp\/second\.port=<free port>; set HTTP_PORT=<free port>, or pass --set receivers\.otlp\.port=<free port>\n$/,
    );
  });
});

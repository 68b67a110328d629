// The config loader: YAML parsing, env expansion, overrides, schema validation and graph checks.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText, loadConfigFile, validateConfig } from '../src/config/load.ts';
import { TracepipeError } from '../src/errors.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { stubFactory, tempDir, writeFile } from './helpers.ts';

function registry(): Registry {
  return new Registry([
    stubFactory('receiver', 'src_spans', { produces: 'spans', listens: true }),
    stubFactory('receiver', 'src_runs', { produces: 'runs' }),
    stubFactory('processor', 'to_runs', { consumes: 'spans', produces: 'runs' }),
    stubFactory('processor', 'spans_only', { consumes: 'spans', produces: 'spans' }),
    stubFactory('exporter', 'runs_sink', { consumes: 'runs' }),
    stubFactory('exporter', 'spans_sink', { consumes: 'spans' }),
    stubFactory('exporter', 'any_sink', { consumes: 'any' }),
    stubFactory('processor', 'pass_through', { consumes: 'any', produces: 'any' }),
  ]);
}

function errorsOf(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  const data = parseConfigText(yaml, { env });
  return validateConfig(data, registry(), '/tmp').errors;
}

async function rejection(promise: Promise<unknown> | (() => unknown)): Promise<TracepipeError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    assert.ok(error instanceof TracepipeError, `expected a TracepipeError, got ${error}`);
    return error;
  }
  assert.fail('expected an error');
}

const valid = `
receivers: { src_spans: {} }
processors: { to_runs: {} }
exporters: { runs_sink: {} }
service:
  pipelines:
    traces: { receivers: [src_spans], processors: [to_runs], exporters: [runs_sink] }
`;

describe('config: parsing', () => {
  it('accepts a valid config and applies service defaults', () => {
    const { config, errors } = validateConfig(parseConfigText(valid), registry(), '/tmp');
    assert.deepEqual(errors, []);
    assert.equal(config!.service.shutdown_timeout_ms, 10000);
    assert.equal(config!.service.telemetry.logs.level, 'info');
    assert.deepEqual(config!.pipelines.traces!.processors, ['to_runs']);
  });

  it('reports malformed YAML with line and column', async () => {
    const error = await rejection(() => parseConfigText('receivers:\n  otlp: {port: 1\nservice: [', {}, 'bad.yaml'));
    assert.equal(error.code, 'TP_ERR_CONFIG_PARSE');
    assert.match(error.message, /bad\.yaml:\d+:\d+: /);
  });

  it('reports an unreadable file', async () => {
    const error = await rejection(loadConfigFile('/nonexistent/pipeline.yaml', registry()));
    assert.equal(error.code, 'TP_ERR_CONFIG_READ');
    assert.match(error.message, /ENOENT/);
  });
});

describe('config: environment expansion', () => {
  const env = { PORT: '5000', NAME: 'edge', EMPTY: '', MULTI: 'a\nb' };

  it('expands ${env:VAR}, ${VAR}, defaults and $$ escapes, typing plain whole-value references', () => {
    const data = parseConfigText(
      `a: \${env:PORT}\nb: "\${PORT}"\nc: \${MISSING:-4318}\nd: pre-\${NAME}-post\ne: $\${NAME}\nf: \${env:MISSING:-x y}\ng: \${EMPTY:-fallback}\nh: \${TRUE:-true}`,
      { env },
    ) as Record<string, unknown>;
    assert.deepEqual(data, {
      a: 5000,
      b: '5000',
      c: 4318,
      d: 'pre-edge-post',
      e: '${NAME}',
      f: 'x y',
      g: 'fallback',
      h: true,
    });
  });

  it('reports an unset variable without default, naming the variable and its path', async () => {
    const error = await rejection(() =>
      parseConfigText('exporters:\n  backend:\n    api_key: ${env:SERVICE_API_KEY}\n', { env }),
    );
    assert.equal(error.code, 'TP_ERR_CONFIG_INVALID');
    assert.match(error.message, /exporters\.backend\.api_key: environment variable SERVICE_API_KEY is not set/);
  });

  it('rejects a value that expands to several lines', async () => {
    const error = await rejection(() => parseConfigText('x: ${MULTI}\n', { env }));
    assert.match(error.message, /x: .*newline/);
  });

  it('applies --set overrides before validation, typed as YAML', () => {
    const data = parseConfigText(valid, {
      sets: ['receivers.src_spans.port=9000', 'service.shutdown_timeout_ms=5'],
    }) as {
      receivers: { src_spans: { port: number } };
      service: { shutdown_timeout_ms: number };
    };
    assert.equal(data.receivers.src_spans.port, 9000);
    assert.equal(data.service.shutdown_timeout_ms, 5);
  });
});

describe('config: validation errors, all reported with their paths', () => {
  it('names an unknown component type and lists the known ones', () => {
    const errors = errorsOf(valid.replace('exporters: { runs_sink: {} }', 'exporters: { runs_sink: {}, bogus: {} }'));
    assert.ok(
      errors.includes('exporters.bogus: unknown exporter type "bogus" (known: any_sink, runs_sink, spans_sink)'),
      errors.join('\n'),
    );
  });

  it('reports wrong value types and unknown keys in component configs', () => {
    const errors = errorsOf(
      valid.replace('receivers: { src_spans: {} }', 'receivers: { src_spans: { port: "x", prot: 1 } }'),
    );
    assert.ok(errors.includes('receivers.src_spans.port: must be integer'), errors.join('\n'));
    assert.ok(errors.includes('receivers.src_spans.prot: unknown key; did you mean "port"?'), errors.join('\n'));
  });

  it('suggests the closest type, key and enum value, and reports nothing that follows from a typo', () => {
    const errors = errorsOf(
      valid
        .replace('processors: { to_runs: {} }', 'processors: { to_rnus: {} }')
        .replace('processors: [to_runs]', 'processors: [to_rnus]')
        .replace('service:', 'service:\n  telemetry: { logs: { level: inof } }'),
    );
    // A mistake in the service's own settings does not hide the components' mistakes.
    assert.deepEqual(errors, [
      'service.telemetry.logs.level: must be one of "trace", "debug", "info", "warn", "error", "fatal", "silent"; did you mean "info"?',
      'processors.to_rnus: unknown processor type "to_rnus" (known: pass_through, spans_only, to_runs); did you mean "to_runs"?',
    ]);
    // The pipeline names the component right and its key is misspelt: reported once, at the key,
    // never as "to_runs is not defined; did you mean to_rnus?".
    assert.deepEqual(errorsOf(valid.replace('processors: { to_runs: {} }', 'processors: { to_rnus: {} }')), [
      'processors.to_rnus: unknown processor type "to_rnus" (known: pass_through, spans_only, to_runs); did you mean "to_runs"?',
    ]);
    const graph = errorsOf(
      valid
        .replace('processors: { to_runs: {} }', 'processors: { to_rnus: {} }')
        .replace('processors: [to_runs]', 'processors: [to_rnus]'),
    );
    // Neither "not defined" nor a data-type mismatch after the unknown processor: only the cause.
    assert.deepEqual(graph, [
      'processors.to_rnus: unknown processor type "to_rnus" (known: pass_through, spans_only, to_runs); did you mean "to_runs"?',
    ]);
    const reference = errorsOf(valid.replace('processors: [to_runs]', 'processors: [to_run]'));
    assert.ok(
      reference.includes(
        'service.pipelines.traces.processors.0: processor "to_run" is not defined under processors; did you mean "to_runs"?',
      ),
      reference.join('\n'),
    );
  });

  it('reports wrong types in the service section', () => {
    const errors = errorsOf(valid.replace('service:', 'service:\n  shutdown_timeout_ms: -1'));
    assert.deepEqual(errors, ['service.shutdown_timeout_ms: must be >= 0']);
  });

  it('reports a data-type mismatch between stages', () => {
    const errors = errorsOf(valid.replace('processors: [to_runs], exporters: [runs_sink]', 'exporters: [runs_sink]'));
    assert.deepEqual(errors, [
      'service.pipelines.traces.exporters: "runs_sink" consumes runs but its receivers produce spans',
      'processors.to_runs: defined but not used in any pipeline',
    ]);
  });

  it('lets an `any` processor pass on either data type, checking the stages around it', () => {
    const passing = valid
      .replace('processors: { to_runs: {} }', 'processors: { to_runs: {}, pass_through: {}, pass_through/runs: {} }')
      .replace('processors: [to_runs]', 'processors: [pass_through, to_runs, pass_through/runs]');
    assert.deepEqual(errorsOf(passing), []);
    // What flows past it is still what reaches it: runs_sink after it still gets spans.
    const mismatched = valid
      .replace('processors: { to_runs: {} }', 'processors: { to_runs: {}, pass_through: {} }')
      .replace('processors: [to_runs]', 'processors: [pass_through]');
    assert.deepEqual(errorsOf(mismatched), [
      'service.pipelines.traces.exporters: "runs_sink" consumes runs but its receivers produce spans',
      'processors.to_runs: defined but not used in any pipeline',
    ]);
  });

  it('lets an `any` exporter take either data type', () => {
    const errors = errorsOf(valid.replace(/runs_sink/g, 'any_sink'));
    assert.deepEqual(errors, []);
  });

  it('reports referenced-but-undefined and defined-but-unused components, and empty pipelines', () => {
    const errors = errorsOf(`
receivers: { src_spans: {}, src_runs: {} }
exporters: { spans_sink: {} }
service:
  pipelines:
    traces: { receivers: [src_spans], processors: [spans_only], exporters: [spans_sink] }
    traces/empty: { receivers: [], exporters: [] }
`);
    assert.deepEqual(errors.sort(), [
      'receivers.src_runs: defined but not used in any pipeline',
      'service.pipelines.traces.processors.0: processor "spans_only" is not defined under processors',
      'service.pipelines.traces/empty.exporters: a pipeline needs at least one exporter',
      'service.pipelines.traces/empty.receivers: a pipeline needs at least one receiver',
    ]);
  });

  it('reports two receivers listening on one port, but not on port 0', () => {
    const twoOnOnePort = `
receivers: { src_spans: { port: 4318 }, src_spans/second: { port: 4318 } }
exporters: { spans_sink: {} }
service:
  pipelines:
    traces: { receivers: [src_spans, src_spans/second], exporters: [spans_sink] }
`;
    assert.deepEqual(errorsOf(twoOnOnePort), [
      'receivers.src_spans/second: listens on 127.0.0.1:4318, which receivers.src_spans already uses',
    ]);
    assert.deepEqual(errorsOf(twoOnOnePort.replace(/4318/g, '0')), []);
  });

  it('reports a missing service section and an invalid component id', () => {
    assert.deepEqual(errorsOf('receivers: {}'), ['service: is required']);
    const errors = errorsOf(
      valid.replace('receivers: { src_spans: {} }', 'receivers: { src_spans: {}, "Bad Id": {} }'),
    );
    assert.deepEqual(errors, [
      'receivers.Bad Id: invalid name (must match pattern "^[a-z][a-z0-9_]*(/[A-Za-z0-9_.-]+)?$")',
    ]);
  });
});

describe('config: plugins', () => {
  it('loads a plugin by relative path and validates its components', async () => {
    const dir = tempDir();
    const path = writeFile(
      dir,
      'pipeline.yaml',
      `plugins: [${JSON.stringify(new URL('../examples/redact-processor/index.ts', import.meta.url).pathname)}]
receivers: { src_spans: {} }
processors: { redact: { patterns: ["(unclosed"] } }
exporters: { spans_sink: {} }
service: { pipelines: { traces: { receivers: [src_spans], processors: [redact], exporters: [spans_sink] } } }
`,
    );
    const error = await rejection(loadConfigFile(path, registry()));
    assert.match(error.message, /processors\.redact\.patterns\.0: not a valid regular expression/);
  });

  it('reports a plugin path that does not exist', async () => {
    const dir = tempDir();
    const path = writeFile(dir, 'p.yaml', `plugins: [./missing-plugin.ts]\nservice: { pipelines: {} }\n`);
    const error = await rejection(loadConfigFile(path, registry()));
    assert.equal(error.code, 'TP_ERR_PLUGIN_LOAD');
    assert.match(error.message, /missing-plugin\.ts/);
  });

  it('reports a plugin that exports no factory', async () => {
    const dir = tempDir();
    writeFile(dir, 'not-a-plugin.mjs', 'export const hello = 1;\n');
    writeFile(dir, 'bad-factory.mjs', 'export default { kind: "exporter", type: "Bad-Name" };\n');
    const noExport = writeFile(dir, 'a.yaml', `plugins: [./not-a-plugin.mjs]\nservice: { pipelines: {} }\n`);
    const badFactory = writeFile(dir, 'b.yaml', `plugins: [./bad-factory.mjs]\nservice: { pipelines: {} }\n`);
    const first = await rejection(loadConfigFile(noExport, registry()));
    assert.equal(first.code, 'TP_ERR_PLUGIN_INVALID');
    assert.match(first.message, /no default, `factories` or `factory` export/);
    const second = await rejection(loadConfigFile(badFactory, registry()));
    assert.match(second.message, /type must be lower_snake_case/);
  });

  it('reports a plugin package that is not installed', async () => {
    const dir = tempDir();
    const path = writeFile(
      dir,
      'p.yaml',
      `plugins: [tracepipe-plugin-that-does-not-exist]\nservice: { pipelines: {} }\n`,
    );
    const error = await rejection(loadConfigFile(path, registry()));
    assert.equal(error.code, 'TP_ERR_PLUGIN_LOAD');
  });
});

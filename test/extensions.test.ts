// The fourth component kind: extensions in the config loader (defined, enabled, unknown, unused)
// and in the service (started before every pipeline component, stopped after them, found by other
// components through Host.getExtensions()).

import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseConfigText, validateConfig } from '../src/config/load.ts';
import type { ExtensionFactory, Factory } from '../src/pipeline/component.ts';
import { isTraceViewer } from '../src/pipeline/component.ts';
import { referencedComponents } from '../src/pipeline/catalog.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { Service } from '../src/pipeline/service.ts';
import { silentLogger } from '../src/telemetry/logger.ts';
import { createMetricsRegistry } from '../src/telemetry/metrics.ts';
import journalFactories from './fixtures/journal-plugin.ts';
import { tempDir } from './helpers.ts';

const journalExtension = Object.freeze({
  kind: 'extension',
  type: 'journal_ext',
  stability: 'development',
  description: 'Test extension: journals its lifecycle and what it sees of the host.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['journal'],
    properties: { journal: { type: 'string' }, port: { type: 'integer', default: 0 } },
  },
  listenAddresses: (config) => [`127.0.0.1:${config.port}`],
  create(settings, config) {
    const write = (step: string) =>
      appendFileSync(settings.host.resolvePath(config.journal), `${settings.kind}:${settings.id}:${step}\n`);
    return {
      async start() {
        write(`start (pipelines ${settings.host.state()})`);
      },
      async shutdown() {
        write('shutdown');
      },
      traceListUrl: () => `http://127.0.0.1/${settings.id}/ui/traces`,
      traceUrl: (traceId: string) => `http://127.0.0.1/${settings.id}/ui/traces/${traceId}`,
    };
  },
} satisfies ExtensionFactory<{ journal: string; port: number }>);

const factories: Factory[] = [...journalFactories, journalExtension];

const pipelines = `
receivers: { journal_source: { journal: journal.txt, spans: 0 } }
exporters: { journal_sink: { journal: journal.txt } }
`;

function validate(yaml: string) {
  return validateConfig(parseConfigText(yaml), new Registry(factories), tempDir());
}

describe('extensions in the config', () => {
  it('loads defined and enabled extensions in service.extensions order', () => {
    const { config, errors } = validate(`${pipelines}
extensions: { journal_ext/b: { journal: journal.txt }, journal_ext/a: { journal: journal.txt } }
service:
  extensions: [journal_ext/a, journal_ext/b]
  pipelines: { traces: { receivers: [journal_source], exporters: [journal_sink] } }
`);
    assert.deepEqual(errors, []);
    assert.deepEqual([...config!.extensions.keys()], ['journal_ext/a', 'journal_ext/b']);
    assert.equal(config!.extensions.get('journal_ext/a')!.kind, 'extension');
  });

  it('reports unknown types, undefined and unused extensions, bad config and port clashes at once', () => {
    const { errors } = validate(`${pipelines}
extensions:
  journal_ext: { journal: journal.txt, prot: 1 }
  journal_ext/idle: { journal: journal.txt }
  journal_exr/typo: {}
  journal_ext/clash: { journal: journal.txt, port: 4318 }
  journal_ext/clash2: { journal: journal.txt, port: 4318 }
service:
  extensions: [journal_ext, journal_ext/missing, journal_exr/typo, journal_ext/clash, journal_ext/clash2]
  pipelines: { traces: { receivers: [journal_source], exporters: [journal_sink] } }
`);
    assert.ok(
      errors.some((e) => e.startsWith('extensions.journal_ext') && e.includes('prot')),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) =>
        /extensions\.journal_exr\/typo: unknown extension type "journal_exr".*did you mean "journal_ext"/.test(e),
      ),
    );
    assert.ok(
      errors.some((e) => e.startsWith('service.extensions.1: extension "journal_ext/missing" is not defined')),
      errors.join('\n'),
    );
    assert.ok(errors.includes('extensions.journal_ext/idle: defined but not enabled in service.extensions'));
    assert.ok(errors.some((e) => e.startsWith('extensions.journal_ext/clash2: listens on 127.0.0.1:4318')));
    // The unknown type is reported once, not again as undefined.
    assert.equal(errors.filter((e) => e.includes('journal_exr/typo')).length, 1, errors.join('\n'));
  });

  it('is a section the CLI loads factories for', () => {
    const keys = referencedComponents(parseConfigText('extensions: { trace_explorer/x: {} }\nservice: {}'));
    assert.ok(keys.has('extension/trace_explorer'));
  });
});

describe('extensions in the service', () => {
  it('start before exporters and receivers, stop after them, and are found through the host', async () => {
    const { config, errors } = validate(`${pipelines}
extensions: { journal_ext: { journal: journal.txt } }
service:
  extensions: [journal_ext]
  pipelines: { traces: { receivers: [journal_source], exporters: [journal_sink] } }
`);
    assert.deepEqual(errors, []);
    const service = new Service(config!, {
      logger: silentLogger(),
      metrics: createMetricsRegistry({ processMetrics: false }),
    });
    await service.start();
    const found = service.host.getExtensions().get('journal_ext');
    assert.ok(isTraceViewer(found));
    assert.equal(found.traceUrl('abc'), 'http://127.0.0.1/journal_ext/ui/traces/abc');
    await service.shutdown();
    const lines = readFileSync(`${config!.baseDir}/journal.txt`, 'utf8').trim().split('\n');
    assert.deepEqual(lines, [
      'extension:journal_ext:start (pipelines starting)',
      'exporter:journal_sink:start',
      'receiver:journal_source:start',
      'receiver:journal_source:shutdown',
      'exporter:journal_sink:shutdown',
      'extension:journal_ext:shutdown',
    ]);
  });
});

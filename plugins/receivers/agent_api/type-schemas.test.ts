// Schemas of graphs built without a runtime schema (`Annotation` state), read from their
// TypeScript types by a real server: input, output, state and config of a graph and the states of
// its subgraphs; a graph without types (JavaScript) and an extraction past its time limit fall back
// to the channel list, with a warning.

import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { GraphRegistry } from './internal/graphs/registry.ts';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const TYPED_LANGGRAPH_JSON = fileURLToPath(new URL('./testing/graphs/typed/langgraph.json', import.meta.url));
const ANNOTATED_GRAPH = fileURLToPath(new URL('./testing/graphs/typed/annotated.ts', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));
const BASE_MESSAGE = 'BaseMessage<MessageStructure<MessageToolSet>,MessageType>';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

interface LogRecord {
  level: number;
  msg?: string;
  graph_id?: string;
  reason?: string;
  cached?: number;
  extracted?: number;
}

interface ObjectSchema {
  type?: string;
  properties?: Record<string, Record<string, unknown>>;
  definitions?: Record<string, Record<string, unknown>>;
  $schema?: string;
}

async function typedServer(timeoutMs: number): Promise<{ server: TestServer; warnings: LogRecord[] }> {
  const warnings: LogRecord[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void warnings.push(JSON.parse(line) as LogRecord) },
  );
  const server = await startTestServer({
    langgraph_config: TYPED_LANGGRAPH_JSON,
    type_schemas: { enabled: true, timeout_ms: timeoutMs },
    logger,
  });
  return { server, warnings };
}

const sorted = (values: unknown) => [...(values as string[])].sort();

describe('graph schemas from TypeScript types', () => {
  let server: TestServer;
  let warnings: LogRecord[];
  before(async () => ({ server, warnings } = await typedServer(600_000)));
  after(async () => server?.stop());

  it("an Annotation graph's input, output, state and config come from its types", async () => {
    const schemas = await server.client.assistants.getSchemas('annotated');
    const input = schemas.input_schema as ObjectSchema;
    const output = schemas.output_schema as ObjectSchema;
    const state = schemas.state_schema as ObjectSchema;
    const config = schemas.config_schema as ObjectSchema;

    assert.deepEqual(Object.keys(input.properties ?? {}).sort(), ['messages', 'question']);
    assert.deepEqual(input.properties?.question, { type: 'string' });
    assert.deepEqual(input.properties?.messages, { type: 'array', items: { $ref: `#/definitions/${BASE_MESSAGE}` } });
    // One definition for every kind of message, as the LangGraph API server serves it.
    assert.match(String(input.definitions?.[BASE_MESSAGE]?.description), /Base class for all types of messages/);
    assert.equal(input.$schema, DRAFT_07);

    assert.deepEqual(output.properties, { answer: { type: 'string' }, confidence: { type: ['null', 'number'] } });
    // The state the graph's updates take: its input channels.
    assert.deepEqual(Object.keys(state.properties ?? {}).sort(), ['messages', 'question']);

    assert.equal(config.type, 'object');
    assert.deepEqual(config.properties?.model_name, { type: 'string' });
    assert.deepEqual(sorted(config.properties?.tone?.enum), ['formal', 'plain']);
    assert.deepEqual(schemas.context_schema, schemas.config_schema);
  });

  it('subgraphs, recursively, each with its own state', async () => {
    const subgraphs = (await server.client.assistants.getSubgraphs('annotated', {
      recurse: true,
    })) as unknown as Record<string, { state: ObjectSchema; input: ObjectSchema; output: ObjectSchema }>;
    assert.deepEqual(Object.keys(subgraphs), ['review', 'review|polish']);
    assert.deepEqual(subgraphs.review!.state.properties, { draft: { type: 'string' }, attempts: { type: 'number' } });
    const polish = subgraphs['review|polish']!;
    assert.deepEqual(polish.state.properties?.draft, { type: 'string' });
    assert.deepEqual(sorted(polish.state.properties?.level?.enum), ['heavy', 'light']);
    assert.deepEqual(polish.output.properties, polish.state.properties);
  });

  it('a graph without types (JavaScript) lists its channels, with a warning naming it', async () => {
    const schemas = await server.client.assistants.getSchemas('untyped');
    assert.deepEqual((schemas.state_schema as ObjectSchema).properties, { topic: {}, notes: {} });
    const warning = warnings.find((record) => record.graph_id === 'untyped');
    assert.equal(warning?.level, 40);
    assert.match(String(warning.reason), /not a TypeScript module/);
    assert.equal(
      warnings.some((record) => record.graph_id === 'annotated'),
      false,
    );
  });
});

describe('graph schemas from TypeScript types, asked for as the extraction starts', () => {
  it('waits for the extraction, instead of answering the channel list and keeping it', async () => {
    // The server starts the extraction once listening; its start first looks at every graph's
    // runtime schemas, which takes a while. A request in that window (a studio opened at once)
    // used to find no extraction yet, get the channel list and have it kept as the graph's.
    const registry = await GraphRegistry.load([{ graphId: 'annotated', path: ANNOTATED_GRAPH, exportName: 'graph' }], {
      typeSchemas: { timeoutMs: 600_000, logger: pino({ level: 'silent' }) },
    });
    try {
      const starting = registry.startTypeSchemas();
      const schemas = await registry.schemas('annotated');
      await starting;
      assert.deepEqual((schemas.input_schema as ObjectSchema).properties?.question, { type: 'string' });
      assert.deepEqual(((await registry.schemas('annotated')).input_schema as ObjectSchema).properties?.question, {
        type: 'string',
      });
    } finally {
      await registry.close();
    }
  });
});

describe('graph schemas from TypeScript types, past the time limit', () => {
  it('the graphs not read in time list their channels, with a warning naming the limit', async () => {
    // 100 ms: the compiler does not even load in that time.
    const { server, warnings } = await typedServer(100);
    try {
      const schemas = await server.client.assistants.getSchemas('annotated');
      assert.deepEqual((schemas.state_schema as ObjectSchema).properties, { question: {}, messages: {} });
      assert.deepEqual((schemas.output_schema as ObjectSchema).properties, { answer: {}, confidence: {} });
      const warning = warnings.find((record) => record.graph_id === 'annotated');
      assert.equal(warning?.level, 40);
      assert.match(String(warning.reason), /took longer than 100 ms/);
    } finally {
      await server.stop();
    }
  });
});

describe('graph schemas from TypeScript types, kept between starts', () => {
  it('a restart reads them from the data directory without the compiler; a changed graph is read again', async () => {
    // A project of its own (its packages those of this repository), so that the test can edit it.
    const project = mkdtempSync(join(tmpdir(), 'typed-graphs-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'typed-graphs-data-'));
    symlinkSync(NODE_MODULES, join(project, 'node_modules'));
    copyFileSync(ANNOTATED_GRAPH, join(project, 'annotated.ts'));
    const langgraphJson = join(project, 'langgraph.json');
    writeFileSync(langgraphJson, JSON.stringify({ graphs: { annotated: './annotated.ts:graph' } }));
    const cacheDir = join(dataDir, 'agent', 'type-schemas');

    /** Starts a server on the project and data directory; returns the graph's output schema and how it was read. */
    const start = async () => {
      const records: LogRecord[] = [];
      const logger = pino(
        { level: 'debug' },
        { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
      );
      const server = await startTestServer({
        langgraph_config: langgraphJson,
        type_schemas: { enabled: true, timeout_ms: 600_000 },
        dataDir,
        logger,
      });
      try {
        const schemas = await server.client.assistants.getSchemas('annotated');
        const read = records.find((record) => record.msg === 'Graph type schemas read.');
        // The entry (and, on the first start, its directory) is written in the background once the
        // schemas are answered.
        const cached = () =>
          existsSync(cacheDir) &&
          readdirSync(cacheDir, { withFileTypes: true }).some((file) => file.name.endsWith('.json'));
        while (!cached()) await sleep(20);
        return { output: (schemas.output_schema as ObjectSchema).properties, read };
      } finally {
        await server.stop({ keepData: true });
      }
    };

    try {
      const first = await start();
      assert.deepEqual(first.output, { answer: { type: 'string' }, confidence: { type: ['null', 'number'] } });
      assert.deepEqual([first.read?.cached, first.read?.extracted], [0, 1]);

      const second = await start();
      assert.deepEqual(second.output, first.output);
      assert.deepEqual([second.read?.cached, second.read?.extracted], [1, 0], 'no worker on a restart');

      const graphFile = join(project, 'annotated.ts');
      const edited = readFileSync(graphFile, 'utf8').replace(
        'confidence: Annotation<number | null>,',
        'confidence: Annotation<number | null>,\n  sources: Annotation<string[]>,',
      );
      writeFileSync(graphFile, edited);
      const third = await start();
      assert.deepEqual([third.read?.cached, third.read?.extracted], [0, 1]);
      assert.deepEqual(third.output?.sources, { type: 'array', items: { type: 'string' } });
    } finally {
      rmSync(project, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

// Schemas of graphs built without a runtime schema (`Annotation` state), read from their
// TypeScript types by a real server: input, output, state and config of a graph and the states of
// its subgraphs; a graph without types (JavaScript) and an extraction past its time limit fall back
// to the channel list, with a warning.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const TYPED_LANGGRAPH_JSON = fileURLToPath(new URL('./testing/graphs/typed/langgraph.json', import.meta.url));
const BASE_MESSAGE = 'BaseMessage<MessageStructure<MessageToolSet>,MessageType>';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

interface LogRecord {
  level: number;
  msg?: string;
  graph_id?: string;
  reason?: string;
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

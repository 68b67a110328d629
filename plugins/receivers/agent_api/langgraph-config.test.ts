// LANGGRAPH_CONFIG keeps the LangGraph platform's meaning: the default config (and context) of
// each graph's system assistant, given as JSON in the langgraph.json's `env` or the process's
// environment. A value naming a file is the variable's former meaning here (the langgraph.json's
// path) and is still read, with a warning.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import pino from 'pino';
import { tempDir } from 'tracepipe/testing';
import { COMPAT_LANGGRAPH_JSON, startTestServer } from './testing/test-server.ts';

interface LogRecord {
  level: number;
  msg?: string;
}

const original = process.env.LANGGRAPH_CONFIG;
afterEach(() => {
  if (original === undefined) delete process.env.LANGGRAPH_CONFIG;
  else process.env.LANGGRAPH_CONFIG = original;
});

describe('LANGGRAPH_CONFIG', () => {
  test("the langgraph.json env's JSON becomes the system assistant's config and context, and runs see it", async () => {
    delete process.env.LANGGRAPH_CONFIG;
    const server = await startTestServer({ langgraph_config: COMPAT_LANGGRAPH_JSON });
    try {
      const [system] = await server.client.assistants.search({
        graphId: 'settings',
        metadata: { created_by: 'system' },
      });
      assert.deepEqual(system?.config, { configurable: { model_name: 'from-env' } });
      assert.deepEqual(system.context, { model: 'small' });
      const [other] = await server.client.assistants.search({ graphId: 'logging', metadata: { created_by: 'system' } });
      assert.deepEqual(other?.config, {});
      const values = await server.client.runs.wait(null, 'settings', { input: {} });
      assert.deepEqual(values, { model: 'small', model_name: 'from-env' });
    } finally {
      await server.stop();
    }
  });

  test('the process environment wins over the langgraph.json env', async () => {
    process.env.LANGGRAPH_CONFIG = JSON.stringify({ settings: { context: { model: 'large' } } });
    const server = await startTestServer({ langgraph_config: COMPAT_LANGGRAPH_JSON });
    try {
      const values = await server.client.runs.wait(null, 'settings', { input: {} });
      assert.deepEqual(values, { model: 'large' });
    } finally {
      await server.stop();
    }
  });

  test('a value that is neither JSON nor a file stops the start, naming the variable', async () => {
    process.env.LANGGRAPH_CONFIG = 'model_name=openai';
    await assert.rejects(
      startTestServer({ langgraph_config: COMPAT_LANGGRAPH_JSON }),
      /LANGGRAPH_CONFIG must be a JSON object/,
    );
    process.env.LANGGRAPH_CONFIG = '{"settings": ["not", "an", "object"]}';
    await assert.rejects(
      startTestServer({ langgraph_config: COMPAT_LANGGRAPH_JSON }),
      /LANGGRAPH_CONFIG\.settings must be an object/,
    );
  });

  test('the path of a langgraph.json in it is still read, with a warning naming LANGGRAPH_JSON', async () => {
    const dir = tempDir('langgraph-config-');
    const file = join(dir, 'langgraph.json');
    writeFileSync(
      file,
      JSON.stringify({ graphs: { moved: `${join(COMPAT_LANGGRAPH_JSON, '../settings.ts')}:graph` } }),
    );
    process.env.LANGGRAPH_CONFIG = file;
    const records: LogRecord[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
    );
    const server = await startTestServer({ logger });
    try {
      const [system] = await server.client.assistants.search({ graphId: 'moved' });
      assert.equal(system?.graph_id, 'moved');
      const warning = records.find((record) => record.level === 40 && record.msg?.includes('LANGGRAPH_JSON'));
      assert.ok(warning, 'a warning names the new variable');
      assert.equal(process.env.LANGGRAPH_CONFIG, undefined, 'graphs never see a path there');
    } finally {
      await server.stop();
    }
  });
});

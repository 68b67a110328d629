// Graphs that log through `getLogger()` from `@langchain/langgraph-sdk/logging` load and run, and
// their lines land in the server's own log with their fields.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { COMPAT_LANGGRAPH_JSON, startTestServer } from './testing/test-server.ts';

interface LogRecord {
  level: number;
  msg?: string;
  source?: string;
  topic?: string;
}

describe('the LangGraph SDK logger', () => {
  test('a graph calling getLogger() at import loads, and its lines reach the server log', async () => {
    const records: LogRecord[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
    );
    const server = await startTestServer({
      langgraph_config: COMPAT_LANGGRAPH_JSON,
      logger,
    });
    try {
      await server.client.runs.wait(null, 'logging', { input: { topic: 'tides' } });
      const imported = records.find((record) => record.msg === 'logging graph imported');
      assert.equal(imported?.source, 'graph');
      assert.equal(imported.level, 30);
      const fromNode = records.find((record) => record.msg === 'node saw a topic');
      assert.equal(fromNode?.topic, 'tides');
      assert.equal(fromNode.level, 40);
    } finally {
      await server.stop();
    }
    assert.equal(Symbol.for('langgraph.api.sdk-logger') in globalThis, false, 'the stopped server unregisters it');
  });
});

// A graph built with another copy of `@langchain/langgraph` than the server's (its project's own
// `node_modules`) is served, and the server's start warns about it, naming the graph.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import pino from 'pino';
import { tempDir } from 'tracepipe/testing';
import { projectWithItsOwnLangGraph } from './testing/langgraph-copy.ts';
import { EXAMPLES_LANGGRAPH_JSON, startTestServer } from './testing/test-server.ts';

interface LogRecord {
  level: number;
  msg?: string;
  graphs?: string[];
  server_langgraph?: string;
}

const TWO_COPIES = /another copy of @langchain\/langgraph/;

async function startLogged(overrides: Parameters<typeof startTestServer>[0]) {
  const records: LogRecord[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) });
  return { server: await startTestServer({ ...overrides, logger }), records };
}

describe('graphs on another copy of LangGraph', () => {
  test('are served, and named in a warning at start', async () => {
    const dir = tempDir('agent-api-langgraph-copy-');
    try {
      const graphFile = projectWithItsOwnLangGraph(dir);
      const { server, records } = await startLogged({
        langgraph_config: undefined,
        graphs: { own: `${graphFile}:graph`, chat: 'examples/graphs/chat.ts:graph' },
      });
      try {
        const warning = records.find((record) => TWO_COPIES.test(record.msg ?? ''));
        assert.equal(warning?.level, 40);
        assert.deepEqual(warning.graphs, ['own']);
        assert.match(warning.server_langgraph ?? '', /node_modules\/@langchain\/langgraph$/);
        assert.deepEqual(await server.client.runs.wait(null, 'own', { input: { text: 'hi' } }), { text: 'hi!' });
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("are not reported when every graph uses the server's copy", async () => {
    const { server, records } = await startLogged({ langgraph_config: EXAMPLES_LANGGRAPH_JSON });
    await server.stop();
    assert.equal(
      records.some((record) => TWO_COPIES.test(record.msg ?? '')),
      false,
    );
  });
});

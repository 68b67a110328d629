// A conversation with the agent server as a thread in the explorer: three turns on one thread of
// the example chat agent (a real agent server, pipeline, trace store and explorer, in process) are
// one thread of three turns, with each turn's tokens, cost and latency and the totals, through the
// API and, in Debian's Chromium, on the threads list and the thread page.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Browser } from 'playwright-core';
import type { Service } from 'tracepipe';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually, tempDir } from 'tracepipe/testing';
import { OUTPUT, startAgentServerWithExplorer } from './support.ts';

interface Turn {
  trace_id: string;
  status: string;
  total_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
  duration_ms: number | null;
  cost: number | null;
  cost_source: { kind: string } | null;
  input_preview: string | null;
  output_preview: string | null;
  thread_id: string | null;
}

describe('an agent server conversation as a thread', () => {
  const dir = tempDir('tracepipe-explorer-threads-');
  let service: Service;
  let client: Client;
  let explorer: string;

  before(async () => {
    // The example agent answers offline with its local model, `local-echo`, priced here.
    const started = await startAgentServerWithExplorer(dir, 'prices: { local-echo: { input: 1, output: 2 } }');
    service = started.service;
    client = new Client({ apiUrl: started.agentUrl });
    explorer = started.explorerUrl;
  });

  after(async () => {
    await service?.shutdown();
  });

  const questions = ['What is a thread?', 'And a turn?', 'Thanks, bye'];
  let threadId: string;
  let runIds: string[];

  it('groups three turns of one agent server thread into one thread with per-turn and total figures', async () => {
    // Another conversation, so that grouping is tested, not just listing.
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'Elsewhere' }] } });
    const thread = await client.threads.create();
    threadId = thread.thread_id;
    runIds = [];
    for (const question of questions) {
      const run = await client.runs.create(threadId, 'agent', {
        input: { messages: [{ role: 'user', content: question }] },
      });
      await client.runs.join(threadId, run.run_id);
      runIds.push(run.run_id);
    }

    const detail = await eventually(async () => {
      const response = await fetch(`${explorer}/api/threads/${threadId}`);
      assert.equal(response.status, 200);
      const body = (await response.json()) as {
        thread: { turns: number; total_tokens: number; duration_ms: number; cost: number | null };
        turns: Turn[];
      };
      assert.equal(body.turns.length, 3);
      assert.ok(body.turns.every((turn) => turn.status === 'success' && turn.total_tokens > 0));
      return body;
    });
    // Turn by turn, in order: each is the trace of its run (the trace id is the run id).
    assert.deepEqual(
      detail.turns.map((turn) => turn.trace_id),
      runIds,
    );
    assert.deepEqual(
      detail.turns.map((turn) => turn.input_preview),
      questions,
    );
    for (const turn of detail.turns) {
      assert.equal(turn.thread_id, threadId);
      assert.ok(turn.output_preview, 'each turn shows its answer');
      assert.ok((turn.duration_ms ?? 0) > 0);
      assert.equal(turn.cost_source?.kind, 'configured');
      const expected = (turn.prompt_tokens * 1 + turn.completion_tokens * 2) / 1e6;
      assert.ok(Math.abs(turn.cost! - expected) < 1e-12, `turn cost ${turn.cost} ≠ ${expected}`);
    }
    const sum = (pick: (turn: Turn) => number) => detail.turns.reduce((total, turn) => total + pick(turn), 0);
    assert.equal(detail.thread.turns, 3);
    assert.equal(
      detail.thread.total_tokens,
      sum((turn) => turn.total_tokens),
    );
    assert.ok(Math.abs(detail.thread.duration_ms - sum((turn) => turn.duration_ms!)) < 1e-6);
    assert.ok(Math.abs(detail.thread.cost! - sum((turn) => turn.cost!)) < 1e-12);

    const list = (await (await fetch(`${explorer}/api/threads`)).json()) as {
      threads: { thread_id: string; turns: number; input_preview: string }[];
    };
    const listed = list.threads.find((t) => t.thread_id === threadId);
    assert.equal(listed?.turns, 3);
    // The list does not price its threads (the detail does): no `cost` rather than an "unknown" null.
    assert.equal('cost' in (listed ?? {}), false);
    assert.equal('cost_source' in (listed ?? {}), false);
    assert.equal(listed?.input_preview, questions[0]);
    assert.equal(list.threads.find((t) => t.thread_id === other.thread_id)?.turns, 1);
    // The trace list filters by thread too.
    const traces = (await (await fetch(`${explorer}/api/traces?thread_id=${threadId}`)).json()) as { traces: Turn[] };
    assert.equal(traces.traces.length, 3);
  });

  describe('in a browser', { skip: noChromium }, () => {
    let browser: Browser;
    const pageErrors: string[] = [];
    before(async () => {
      mkdirSync(OUTPUT, { recursive: true });
      browser = await launchChromium(chromium);
    });
    after(async () => {
      await browser?.close();
      assert.deepEqual(pageErrors, [], 'the page threw');
    });

    it('lists the thread and shows it turn by turn, each turn linking to its trace', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${explorer}/ui/threads`);
      const link = page.getByRole('link', { name: threadId });
      await link.waitFor();
      const row = page.locator('tr', { has: link });
      assert.match(await row.innerText(), /What is a thread\?/);
      assert.match(await row.innerText(), /\b3\b/);
      await link.click();
      await eventually(async () => assert.equal(await page.getByTestId('turn').count(), 3));
      assert.equal(new URL(page.url()).pathname, `/ui/threads/${threadId}`);
      const turns = page.getByTestId('turn');
      for (const [index, question] of questions.entries()) {
        assert.match(await turns.nth(index).innerText(), new RegExp(question.replace('?', '\\?')));
        assert.match(await turns.nth(index).innerText(), /Tokens\s*\d+[\s\S]*Cost\s*\$[\d.]+[\s\S]*Latency/);
      }
      assert.match(await page.getByTestId('thread-totals').innerText(), /Turns\s*3/);
      assert.match(await page.getByTestId('thread-totals').innerText(), /configured price of local-echo/);
      await page.screenshot({ path: join(OUTPUT, 'explorer-thread.png'), fullPage: true });
      await turns
        .nth(1)
        .getByRole('link', { name: /Turn 2/ })
        .click();
      await eventually(async () => assert.equal(new URL(page.url()).pathname, `/ui/traces/${runIds[1]}`));
      await page.getByRole('link', { name: 'Thread', exact: true }).waitFor();
      await page.close();
    });
  });
});

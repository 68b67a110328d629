// The studio in a real browser (Debian's Chromium through playwright-core) against a real agent
// server on a loopback port, with the example graphs: tool calls shown by name with their results,
// an interrupt answered in place, a fork from a checkpoint, the thread browser's search, a thread
// opened from a link, the last-used assistant, the configuration form's context, and the run
// history's trace links.
// Outcomes are checked through the API as well. Screenshots of each state are written under
// `test-output/studio/` for a reviewer. Without the browser, only the SDK test runs.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Message } from '@langchain/langgraph-sdk';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { asObject, asObjects, kwargsOf, messagesOf } from './testing/types.ts';

const OUTPUT = fileURLToPath(new URL('../../../test-output/studio/', import.meta.url));
const TRACES = 'http://traces.test:4319/ui/traces';

/** The messages in a checkpoint's values; none when they have no messages yet (a thread's first checkpoints). */
const messagesIn = (values: unknown): Message[] => {
  const { messages } = asObject(values, 'checkpoint values');
  return Array.isArray(messages) ? (messages as Message[]) : [];
};

describe('agent_api studio', { skip: noChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];

  const screenshot = (name: string, target: Page = page) =>
    target.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
  const send = async (text: string) => {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  };
  const runStatus = (status: string) => page.locator('[data-testid="run-status"]', { hasText: status }).waitFor();
  const threadIdOnPage = async () => (await page.getByTestId('thread-id').textContent())!.trim();
  const openStudio = async (assistant: string) => {
    await page.goto(`${server.url}/ui/#/studio/${assistant}`);
    // The same hash does not load the page again: reload so that it reads the threads afresh.
    await page.reload();
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
  };
  const assistantOnPage = () => page.locator('#studio-assistant').inputValue();

  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    server = await startTestServer({ ui: { enabled: true, path: '/ui', trace_explorer_url: TRACES } });
    browser = await launchChromium(chromium);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:'))
        foreignRequests.push(request.url());
    });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'the page threw');
    assert.deepEqual(foreignRequests, [], 'the page must not reach other origins');
  });

  it('opens on the first graph of the deployment, then on the last-used assistant', async () => {
    const agent = await server.client.assistants.get('agent');
    await page.goto(`${server.url}/ui/#/studio`);
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
    // No assistant of anyone's: the system assistant of the first graph langgraph.json lists,
    // never an arbitrary one such as `error`.
    await eventually(async () => (await assistantOnPage()) === agent.assistant_id, { message: 'opens on agent' });
    await page.locator('.graph-node[data-node="call_model"]').waitFor();

    // Someone's own assistant comes before the system ones.
    const pirate = await server.client.assistants.create({ graphId: 'chat', name: 'Pirate' });
    await page.reload();
    await eventually(async () => (await assistantOnPage()) === pirate.assistant_id, { message: 'opens on Pirate' });

    // The one chosen last is remembered, over a reload and a fresh visit of #/studio.
    const tools = await server.client.assistants.get('tools');
    await page.locator('#studio-assistant').selectOption(tools.assistant_id);
    await page.locator('.graph-node[data-node="tools"]').waitFor();
    await page.goto(`${server.url}/ui/#/assistants`);
    await page.getByRole('link', { name: 'Studio' }).click();
    await eventually(async () => (await assistantOnPage()) === tools.assistant_id, { message: 'opens on tools' });
    await screenshot('01-graph-last-used-assistant');
  });

  it('shows a tool call by name with its arguments and result, and links the run to its trace', async () => {
    await openStudio('tools');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    await send('What is 2 plus 3?');
    await runStatus('success');
    const call = page.locator('.tool-call[data-tool="add"]');
    await call.waitFor();
    assert.equal((await call.locator('.tool-name').textContent())!.trim(), 'add');
    assert.deepEqual(JSON.parse((await call.locator('.tool-args').textContent())!), { a: 2, b: 3 });
    assert.equal((await call.locator('.tool-result-text').textContent())!.trim(), '5');
    // The result is tied to the call, not shown as a bare message of its own.
    assert.equal(await page.locator('.message[data-role="tool"]').count(), 0);
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'The tool says: 5' }).waitFor();

    // The run history lists the run with a link to its trace: the run id's 16 bytes, written in
    // the UUID form the trace store keys traces by.
    const threadId = await threadIdOnPage();
    const [run] = await server.client.runs.list(threadId);
    const item = page.locator(`.run-list li[data-run-id="${run!.run_id}"]`);
    await item.waitFor();
    const link = await item.getByRole('link', { name: /View trace/ }).getAttribute('href');
    assert.equal(link, `${TRACES}/${run!.run_id}?run=${run!.run_id}`);
    await screenshot('02-tool-call');
  });

  it('answers an interrupt in place: the review request, an edit, and the run completes', async () => {
    await openStudio('interrupt');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    const threadId = await threadIdOnPage();
    await send('ship it');
    const panel = page.locator('section.interrupt');
    await panel.getByRole('heading', { name: /Waiting for your answer/ }).waitFor();
    await panel.getByText('Approve this draft?').waitFor();
    assert.deepEqual(JSON.parse((await panel.getByTestId('interrupt-payload').textContent())!), {
      reply: 'Draft answer to: ship it',
    });
    assert.equal((await server.client.threads.get(threadId)).status, 'interrupted');
    await page.locator('.graph-node.next[data-node="review"]').waitFor();
    await screenshot('03-interrupt');

    await panel.getByRole('radio', { name: 'Edit' }).check();
    await panel.getByLabel('Arguments of send_reply (JSON)').fill('{"reply": "Shipping it today."}');
    await panel.getByRole('button', { name: 'Send decision' }).click();
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'Shipping it today.' }).waitFor();
    await runStatus('success');
    await panel.waitFor({ state: 'detached' });
    assert.equal((await server.client.threads.get(threadId)).status, 'idle');
    const runs = await server.client.runs.list(threadId);
    const resumed = runs.find((run) => kwargsOf(run).command);
    assert.ok(resumed, `no run resumed the thread: ${JSON.stringify(runs)}`);
    assert.deepEqual(asObject(kwargsOf(resumed).command, 'command').resume, {
      decisions: [{ type: 'edit', edited_action: { name: 'send_reply', args: { reply: 'Shipping it today.' } } }],
    });
    await screenshot('04-interrupt-answered');

    // A rejection with a reason, on a second draft.
    await send('and this?');
    await panel.getByRole('radio', { name: 'Reject' }).check();
    await panel.getByLabel('Reason (optional)').fill('not now');
    await panel.getByRole('button', { name: 'Send decision' }).click();
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'Draft rejected: not now' }).waitFor();
  });

  it('forks the thread from a checkpoint into a new branch with another answer', async () => {
    await openStudio('agent');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    const threadId = await threadIdOnPage();
    await send('first');
    await runStatus('success');
    await send('second');
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'You said: second' }).waitFor();
    await runStatus('success');

    // The checkpoint the first run ended on: two messages.
    const history = await server.client.threads.getHistory(threadId);
    const endOfFirst = history.find((c) => messagesIn(c.values).length === 2 && c.next.length === 0)!;
    const checkpoint = page.locator(`.checkpoints li[data-checkpoint-id="${endOfFirst.checkpoint.checkpoint_id}"]`);
    await checkpoint.getByRole('button', { name: /Fork from here/ }).click();
    await page.locator('.fork-banner').waitFor();
    await screenshot('05-fork-chosen');
    await send('another way');
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'You said: another way' }).waitFor();
    await runStatus('success');

    const state = await server.client.threads.getState(threadId);
    assert.deepEqual(
      messagesOf(state.values).map((m) => m.content),
      ['first', 'You said: first', 'another way', 'You said: another way'],
    );
    // The old branch is still in the history; the new one descends from the chosen checkpoint.
    const all = await server.client.threads.getHistory(threadId, { limit: 100 });
    assert.ok(all.some((c) => messagesIn(c.values).some((m) => m.content === 'You said: second')));
    assert.equal(await page.locator('.message').filter({ hasText: 'second' }).count(), 0);
    // The runs list marks the run started from the chosen checkpoint, and only it.
    const forkedRun = page.locator('.run-list li').filter({ hasText: 'another way' });
    await forkedRun.locator('.badge', { hasText: 'fork' }).waitFor();
    assert.equal(await page.locator('.run-list .badge', { hasText: 'fork' }).count(), 1);
    await screenshot('06-forked');
  });

  it('edits the state as a node', async () => {
    await openStudio('agent');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    const threadId = await threadIdOnPage();
    await send('edit me');
    await runStatus('success');
    const state = await server.client.threads.getState(threadId);
    const answer = messagesOf(state.values)[1];
    await page.getByRole('button', { name: 'Edit state', exact: true }).click();
    await page
      .getByLabel('Values (JSON object)')
      .fill(JSON.stringify({ messages: [{ ...answer, content: 'An edited answer.' }] }));
    await page.getByLabel('As node').selectOption('call_model');
    await page.getByRole('button', { name: 'Save state' }).click();
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'An edited answer.' }).waitFor();
    const edited = await server.client.threads.getState(threadId);
    assert.deepEqual(
      messagesOf(edited.values).map((m) => m.content),
      ['edit me', 'An edited answer.'],
    );
    assert.equal(edited.metadata?.source, 'update');
    await screenshot('07-state-edited');
  });

  it('finds a thread by its first message and opens it to continue', async () => {
    for (const text of ['alpha question', 'the needle in the haystack', 'omega question']) {
      const thread = await server.client.threads.create();
      await server.client.runs.wait(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: text }] },
      });
    }
    await openStudio('agent');
    const list = page.locator('.thread-list');
    await list.getByText('the needle in the haystack').waitFor();
    await page.getByLabel('Search threads').fill('NEEDLE');
    await eventually(async () => (await list.locator('.thread-item').count()) === 1, { message: 'one match' });
    await screenshot('08-thread-search');
    await list.getByRole('button', { name: /the needle in the haystack/ }).click();
    await page
      .locator('.message[data-role="assistant"]')
      .filter({ hasText: 'You said: the needle in the haystack' })
      .waitFor();
    await send('and more');
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'You said: and more' }).waitFor();
    await runStatus('success');
    assert.equal(await page.locator('.message').count(), 4);
  });

  it('opens the thread a link names (#/studio/<assistant>/<thread>), as the trace explorer links it', async () => {
    const agent = await server.client.assistants.get('agent');
    const thread = await server.client.threads.create();
    await server.client.runs.wait(thread.thread_id, agent.assistant_id, {
      input: { messages: [{ role: 'user', content: 'opened from a link' }] },
    });
    await page.goto(`${server.url}/ui/#/studio/${agent.assistant_id}/${thread.thread_id}`);
    await page.reload();
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
    await page.getByTestId('thread-id').filter({ hasText: thread.thread_id }).waitFor();
    await page.locator('.message[data-role="user"]').filter({ hasText: 'opened from a link' }).waitFor();
    await page.locator('.thread-list .thread-item.current', { hasText: 'opened from a link' }).waitFor();
    assert.equal(await assistantOnPage(), agent.assistant_id);
  });

  it('sends the context from the form generated from the context schema', async () => {
    await openStudio('chat');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    await page.getByText('Configuration', { exact: true }).click();
    const prompt = page.getByLabel('system_prompt');
    await prompt.waitFor();
    await page.getByLabel('model_name').waitFor();
    await prompt.fill('Answer in French.');
    await screenshot('09-config-form');
    await send('hello');
    await page
      .locator('.message[data-role="assistant"]')
      .filter({ hasText: '(Answer in French.) You said: hello' })
      .waitFor();
    await runStatus('success');
    const [run] = await server.client.runs.list(await threadIdOnPage());
    assert.ok(run, 'the thread has a run');
    assert.deepEqual(kwargsOf(run).context, { system_prompt: 'Answer in French.' });
  });

  it('pauses at a breakpoint from the debug settings and continues', async () => {
    await openStudio('tools');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    await page.getByText('Debug', { exact: true }).click();
    await page.getByLabel('Pause before tools').check();
    await page.getByRole('checkbox', { name: 'debug', exact: true }).check();
    await send('Weather in Paris?');
    const panel = page.locator('section.interrupt');
    await panel.getByRole('heading', { name: 'Paused before tools' }).waitFor();
    await page.locator('.tool-call[data-tool="get_weather"] .tool-result.pending').waitFor();
    await page.getByRole('heading', { name: 'Other stream events' }).waitFor();
    await screenshot('10-breakpoint');
    await panel.getByRole('button', { name: 'Continue' }).click();
    await page
      .locator('.tool-call[data-tool="get_weather"] .tool-result-text', { hasText: 'sunny in Paris' })
      .waitFor();
    await runStatus('success');
  });

  it('shows a failed run as failed, not as paused at a breakpoint', async () => {
    await openStudio('error');
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByTestId('thread-id').waitFor();
    await send('hello');
    await runStatus('error');
    const threadId = await threadIdOnPage();
    // The failed node is still the thread's next step, but no breakpoint stopped it.
    assert.deepEqual((await server.client.threads.getState(threadId)).next, ['fail']);
    await page.getByRole('alert').filter({ hasText: 'Boo!' }).first().waitFor();
    assert.equal(await page.getByRole('heading', { name: /Paused before/ }).count(), 0);
    assert.equal(await page.getByText('The run stopped at a breakpoint').count(), 0);
    await screenshot('11-failed-run');
  });

  it('is usable at phone width', async () => {
    const phone = await browser.newPage({ viewport: { width: 375, height: 800 } });
    phone.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      await phone.goto(`${server.url}/ui/#/studio/tools`);
      await phone.getByRole('heading', { name: 'Studio' }).waitFor();
      await phone.locator('.thread-list .thread-item').first().click();
      await phone.locator('.tool-call').first().waitFor();
      const width = await phone.evaluate('document.documentElement.scrollWidth');
      assert.ok((width as number) <= 375, `no horizontal scrolling (${width} px)`);
      await screenshot('11-phone', phone);
    } finally {
      await phone.close();
    }
  });
});

// Not a browser test: the example human-in-the-loop graph speaks the schema LangChain's Agent
// Chat UI and Agent Inbox act on, and completes with what each of them sends back.
describe('the example human-in-the-loop graph with Agent Chat UI and Agent Inbox', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.stop();
  });

  const pause = async (text: string) => {
    const thread = await server.client.threads.create({ graphId: 'interrupt' });
    await server.client.runs.wait(thread.thread_id, 'interrupt', {
      input: { messages: [{ role: 'user', content: text }] },
    });
    return thread.thread_id;
  };
  const lastAnswer = async (threadId: string) => {
    const state = await server.client.threads.getState(threadId);
    const last = messagesOf(state.values).at(-1);
    assert.ok(last, `thread ${threadId} has no messages`);
    return last.content;
  };
  const drain = async (stream: AsyncIterable<unknown>) => {
    for await (const _ of stream);
  };

  it('raises an HITLRequest that Agent Chat UI detects and Agent Inbox normalizes', async () => {
    const threadId = await pause('draft me');
    const thread = await server.client.threads.get(threadId);
    assert.equal(thread.status, 'interrupted');
    const [value] = Object.values(thread.interrupts ?? {})
      .flat()
      .map((interrupt) => asObject(interrupt.value, 'interrupt value'));
    assert.ok(value, `thread ${threadId} has no interrupt`);
    // Agent Chat UI (HITL schema, snake_case): non-empty action_requests of {name, args} and
    // review_configs of {action_name, allowed_decisions}.
    const requests = asObjects(value.action_requests, 'action_requests');
    assert.ok(requests.length > 0);
    for (const request of requests) {
      assert.equal(typeof request.name, 'string');
      assert.equal(typeof request.args, 'object');
    }
    const reviewConfigs = asObjects(value.review_configs, 'review_configs');
    assert.ok(reviewConfigs.length > 0);
    const [first] = requests;
    const config = reviewConfigs.find((c) => c.action_name === first.name);
    assert.ok(config, `no review config for ${JSON.stringify(first.name)}`);
    assert.deepEqual(config.allowed_decisions, ['approve', 'edit', 'reject']);
    // Agent Inbox reads action_requests[0].arguments (the pre-release key) and the description.
    assert.deepEqual(first.arguments, { reply: 'Draft answer to: draft me' });
    assert.equal(first.description, 'Approve this draft?');
    // The state's last task carries it too (where both clients look when the thread has no map).
    const state = await server.client.threads.getState(threadId);
    assert.deepEqual(state.tasks.at(-1)!.interrupts.at(-1)!.value, value);
  });

  it('completes with the decisions Agent Chat UI sends (input {} beside the command)', async () => {
    const approve = await pause('one');
    await drain(
      server.client.runs.stream(approve, 'interrupt', {
        input: {},
        command: { resume: { decisions: [{ type: 'approve' }] } },
        streamMode: ['values'],
        streamSubgraphs: true,
      }),
    );
    assert.equal(await lastAnswer(approve), 'Draft answer to: one');
    assert.equal((await server.client.threads.get(approve)).status, 'idle');

    const edit = await pause('two');
    await server.client.runs.wait(edit, 'interrupt', {
      input: {},
      command: {
        resume: { decisions: [{ type: 'edit', edited_action: { name: 'send_reply', args: { reply: 'Edited.' } } }] },
      },
    });
    assert.equal(await lastAnswer(edit), 'Edited.');

    const reject = await pause('three');
    await server.client.runs.wait(reject, 'interrupt', {
      input: {},
      command: { resume: { decisions: [{ type: 'reject', message: 'Too vague.' }] } },
    });
    assert.equal(await lastAnswer(reject), 'Draft rejected: Too vague.');
  });

  it('completes with the HumanResponse lists Agent Inbox sends (graph id as the assistant, events mode)', async () => {
    const accept = await pause('four');
    const request = { action: 'send_reply', args: { reply: 'Draft answer to: four' } };
    await drain(
      server.client.runs.stream(accept, 'interrupt', {
        command: { resume: [{ type: 'accept', args: request }] },
        streamMode: 'events',
      }),
    );
    assert.equal(await lastAnswer(accept), 'Draft answer to: four');
    assert.equal((await server.client.threads.get(accept)).status, 'idle');

    const respond = await pause('five');
    await server.client.runs.wait(respond, 'interrupt', {
      command: { resume: [{ type: 'response', args: 'Answered by a person.' }] },
    });
    assert.equal(await lastAnswer(respond), 'Answered by a person.');

    const edit = await pause('six');
    await server.client.runs.wait(edit, 'interrupt', {
      command: { resume: [{ type: 'edit', args: { action: 'send_reply', args: { reply: 'Inbox edit.' } } }] },
    });
    assert.equal(await lastAnswer(edit), 'Inbox edit.');

    const ignore = await pause('seven');
    await server.client.runs.wait(ignore, 'interrupt', { command: { resume: [{ type: 'ignore', args: null }] } });
    assert.equal(await lastAnswer(ignore), 'seven');
    assert.equal((await server.client.threads.get(ignore)).status, 'idle');
  });
});

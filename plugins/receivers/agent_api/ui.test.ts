// The web interface in a real browser (Debian's Chromium through playwright-core) against a real
// agent server on a loopback port: assistants are created, edited, switched between versions and
// deleted through the forms, bad input is refused on the page, and the studio streams an answer.
// Every outcome is also checked through the API, since the interface must only do what the API
// does. Screenshots of each screen land in the temporary directory for a human look.

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { asObject, asObjects, kwargsOf } from './testing/types.ts';

// Conditions on the page are read through locators and awaited with `eventually`: the page's
// Content-Security-Policy forbids the string predicates of `waitForFunction`, and the test's
// TypeScript has no DOM types for function ones.
const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: join(tmpdir(), `tracepipe-ui-${name}.png`), fullPage: true });

describe('agent_api web interface', { skip: noChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];

  before(async () => {
    server = await startTestServer();
    browser = await launchChromium(chromium);
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
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

  const createThroughForm = async (fields: { graph: string; name: string; description?: string; context: string }) => {
    await page.goto(`${server.url}/ui/#/assistants/new`);
    const form = page.locator('form.assistant-form');
    await form.getByLabel('Graph').selectOption(fields.graph);
    await form.getByLabel('Name').fill(fields.name);
    if (fields.description) await form.getByLabel('Description (optional)').fill(fields.description);
    await form.getByLabel('Configuration (context, JSON object)').fill(fields.context);
    await form.getByRole('button', { name: 'Create assistant' }).click();
  };

  it('serves the interface at /ui/, redirects / and /ui there, and loads nothing from elsewhere', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/ui/');
    const bare = await fetch(`${server.url}/ui`, { redirect: 'manual' });
    assert.equal(bare.status, 302);
    assert.equal(bare.headers.get('location'), '/ui/');
    const index = await fetch(`${server.url}/ui/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const vendor = await fetch(`${server.url}/ui/vendor/preact.mjs`);
    assert.equal(vendor.status, 200);
    assert.match(vendor.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await fetch(`${server.url}/ui/vendor/../../package.json`)).status, 404);

    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { name: 'Assistants' }).waitFor();
    // The system assistant of every example graph is listed.
    for (const graph of ['agent', 'chat', 'tools'])
      await page.getByRole('link', { name: graph, exact: true }).waitFor();
    await screenshot(page, 'assistants');
  });

  it('creates an assistant with a context through the form and lists it', async () => {
    await createThroughForm({
      graph: 'chat',
      name: 'Pirate',
      description: 'Answers like a pirate.',
      context: '{"system_prompt": "Talk like a pirate."}',
    });
    await page.getByRole('heading', { name: 'Pirate', level: 2 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Created “Pirate” (version 1).' }).waitFor();
    await page.locator('table.assistants').getByRole('link', { name: 'Pirate' }).waitFor();

    const [created] = await server.client.assistants.search({ name: 'Pirate' });
    assert.equal(created.graph_id, 'chat');
    assert.equal(created.version, 1);
    assert.equal(created.description, 'Answers like a pirate.');
    assert.deepEqual(created.context, { system_prompt: 'Talk like a pirate.' });
    await screenshot(page, 'assistant-created');

    // The list filters by name and by graph.
    await page.getByLabel('Name', { exact: true }).first().fill('pira');
    await page.locator('table.assistants tbody tr').filter({ hasText: 'Pirate' }).waitFor();
    const rows = page.locator('table.assistants tbody tr');
    await eventually(async () => (await rows.count()) === 1, { message: 'only Pirate is listed' });
    await page.getByLabel('Name', { exact: true }).first().fill('');
    await page.locator('#search-graph').selectOption('tools');
    await eventually(
      async () => {
        const texts = await rows.allTextContents();
        return texts.length === 1 && texts[0].includes('tools');
      },
      { message: 'only the tools assistant is listed' },
    );
    await page.locator('#search-graph').selectOption('');
  });

  it('refuses a context that is not a JSON object, next to the field, and creates nothing', async () => {
    const before = await server.client.assistants.count({ graphId: 'chat' });
    await createThroughForm({ graph: 'chat', name: 'Broken', context: '{"system_prompt": ' });
    const context = page.getByLabel('Configuration (context, JSON object)');
    await page.locator('.field-error').filter({ hasText: 'Not valid JSON' }).waitFor();
    assert.equal(await context.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate('document.activeElement?.id'), 'assistant-create-context');
    await screenshot(page, 'invalid-context');

    await context.fill('["not", "an", "object"]');
    await page.getByRole('button', { name: 'Create assistant' }).click();
    await page.locator('.field-error').filter({ hasText: 'Must be a JSON object' }).waitFor();

    // A missing name is caught too.
    await context.fill('{}');
    await page.locator('form.assistant-form').getByLabel('Name').fill('  ');
    await page.getByRole('button', { name: 'Create assistant' }).click();
    await page.locator('.field-error').filter({ hasText: 'Give the assistant a name.' }).waitFor();

    assert.equal(await server.client.assistants.count({ graphId: 'chat' }), before);
    assert.deepEqual(await server.client.assistants.search({ name: 'Broken' }), []);
  });

  it('works from the keyboard alone: skip link, then an assistant created without the mouse', async () => {
    const focused = () => page.evaluate('document.activeElement?.id || document.activeElement?.textContent?.trim()');
    await page.goto(`${server.url}/ui/#/assistants`);
    await page.getByRole('heading', { name: 'Assistants' }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Skip to content');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Assistants');

    await page.getByRole('link', { name: 'New assistant' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#assistant-create-graph option', { hasText: /^tools$/ }).waitFor({ state: 'attached' });
    await page.locator('#assistant-create-graph').focus();
    await page.keyboard.type('tools');
    assert.equal(await page.locator('#assistant-create-graph').inputValue(), 'tools');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'assistant-create-name');
    await page.keyboard.type('Keyboard');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'assistant-create-description');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'assistant-create-context');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('{"system_prompt": "Keys only."}');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'assistant-create-metadata');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Cancel');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Create assistant');
    await page.keyboard.press('Enter');

    // Focus lands on the new assistant's heading.
    await page.getByRole('heading', { name: 'Keyboard', level: 2 }).waitFor();
    await eventually(async () => (await focused()) === 'detail-title', { message: 'the heading has focus' });
    const [created] = await server.client.assistants.search({ name: 'Keyboard' });
    assert.equal(created.graph_id, 'tools');
    assert.deepEqual(created.context, { system_prompt: 'Keys only.' });
    await server.client.assistants.delete(created.assistant_id);
  });

  it('edits an assistant into version 2, then makes version 1 active again', async () => {
    const [pirate] = await server.client.assistants.search({ name: 'Pirate' });
    await page.goto(`${server.url}/ui/#/assistants/${pirate.assistant_id}`);
    const form = page.locator('form.assistant-form');
    await form.getByLabel('Configuration (context, JSON object)').fill('{"system_prompt": "Be brief."}');
    await form.getByRole('button', { name: 'Save as new version' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “Pirate” as version 2, now active.' }).waitFor();
    await page.locator('.versions li.active[data-version="2"]').waitFor();

    let current = await server.client.assistants.get(pirate.assistant_id);
    assert.equal(current.version, 2);
    assert.deepEqual(current.context, { system_prompt: 'Be brief.' });
    // The form sends everything, so what was not edited is kept in the new version.
    assert.equal(current.description, 'Answers like a pirate.');
    await screenshot(page, 'assistant-version-2');

    await page.getByRole('button', { name: 'Make version 1 active' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 1 is now active.' }).waitFor();
    await page.locator('.versions li.active[data-version="1"]').waitFor();
    // The form shows the active version again.
    await eventually(
      async () => (await page.locator('#assistant-edit-context').inputValue()).includes('Talk like a pirate.'),
      { message: 'the form shows version 1' },
    );
    current = await server.client.assistants.get(pirate.assistant_id);
    assert.equal(current.version, 1);
    assert.deepEqual(current.context, { system_prompt: 'Talk like a pirate.' });
    await screenshot(page, 'assistant-version-1');
  });

  it('streams an answer in the studio and shows the run, its node updates and the thread state', async () => {
    const [pirate] = await server.client.assistants.search({ name: 'Pirate' });
    await page.goto(`${server.url}/ui/#/studio/${pirate.assistant_id}`);
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
    await eventually(async () => (await page.locator('#studio-assistant').inputValue()) === pirate.assistant_id, {
      message: 'the linked assistant is chosen',
    });
    const composer = page.getByLabel('Message', { exact: true });
    await composer.fill('hello there');
    await composer.press('Enter');

    const answer = '(Talk like a pirate.) You said: hello there';
    await page.locator('[data-testid="run-status"]', { hasText: 'success' }).waitFor();
    await page.locator('.message[data-role="assistant"]').filter({ hasText: answer }).waitFor();
    await page.locator('.message[data-role="user"]').filter({ hasText: 'hello there' }).waitFor();
    // The answer arrived as several chunks, one per token of the offline model.
    const chunks = Number((await page.getByTestId('run-chunks').textContent())!.split(' ')[0]);
    assert.ok(chunks > 1, `expected several streamed chunks, got ${chunks}`);
    await page.locator('.updates').getByText('call_model').waitFor();

    await page.getByText('Values (JSON)').click();
    const state = JSON.parse((await page.getByTestId('thread-state').textContent())!);
    assert.deepEqual(
      state.messages.map((m: { type: string; content: string }) => [m.type, m.content]),
      [
        ['human', 'hello there'],
        ['ai', answer],
      ],
    );
    await screenshot(page, 'studio');

    // The page shows what the API holds.
    const threadId = (await page.getByTestId('thread-id').textContent())!;
    const apiState = await server.client.threads.getState(threadId);
    assert.equal((apiState.values as { messages: unknown[] }).messages.length, 2);
    const runs = await server.client.runs.list(threadId);
    assert.deepEqual(
      runs.map((run) => run.status),
      ['success'],
    );

    // A second message continues the same thread.
    await composer.fill('again');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .locator('.message[data-role="assistant"]')
      .filter({ hasText: '(Talk like a pirate.) You said: again' })
      .waitFor();
    await page.locator('[data-testid="run-status"]', { hasText: 'success' }).waitFor();
    assert.equal(
      ((await server.client.threads.getState(threadId)).values as { messages: unknown[] }).messages.length,
      4,
    );

    // Coming back later, the thread is picked from the list and its conversation is shown again.
    await page.goto(`${server.url}/ui/#/studio/${pirate.assistant_id}`);
    await page.reload();
    await page.locator(`.thread-item[data-thread-id="${threadId}"]`).click();
    await eventually(async () => (await page.locator('.message').count()) === 4, {
      message: 'the four messages of the thread are shown',
    });
    await page.locator('.message[data-role="assistant"]').filter({ hasText: 'You said: again' }).waitFor();
  });

  it('shows a failing run as an error, with the message the server streamed', async () => {
    await page.goto(`${server.url}/ui/#/studio/error`);
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
    // The link named the graph; the studio picked its system assistant.
    const errorAssistant = await server.client.assistants.get('error');
    await eventually(
      async () => (await page.locator('#studio-assistant').inputValue()) === errorAssistant.assistant_id,
      { message: 'the error assistant is chosen' },
    );
    // The chat thread of the previous test belongs to another graph: the studio left it.
    await eventually(async () => (await page.getByTestId('thread-id').count()) === 0, {
      message: 'the chat thread is left',
    });
    await page.getByLabel('Message', { exact: true }).fill('fail, please');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'error' }).waitFor();
    const alert = page.locator('.studio-inspect [role="alert"]');
    await alert.waitFor();
    assert.match((await alert.textContent())!, /CustomError: Boo!/);
    await screenshot(page, 'studio-error');
  });

  it('sends more input keys, refuses them when they are not a JSON object, and cancels a running run', async () => {
    await page.goto(`${server.url}/ui/#/studio/sleep`);
    const sleepAssistant = await server.client.assistants.get('sleep');
    await eventually(
      async () => (await page.locator('#studio-assistant').inputValue()) === sleepAssistant.assistant_id,
      { message: 'the sleep assistant is chosen' },
    );
    // Read in one step: the shown thread may change (or go) between two locator calls.
    const threadShown = () =>
      page.evaluate(`document.querySelector('[data-testid="thread-id"]')?.textContent ?? null`) as Promise<
        string | null
      >;
    const previous = await threadShown();
    await page.getByRole('button', { name: 'New thread' }).click();
    await eventually(async () => ![null, previous].includes(await threadShown()), {
      message: 'the new thread is shown',
    });
    const threadId = (await threadShown())!;

    await page.getByText('More input').click();
    const extra = page.getByLabel('Other input keys (JSON object, sent beside the message)');
    await extra.fill('{"delay_ms": ');
    await page.getByLabel('Message', { exact: true }).fill('take your time');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#studio-extra-input-error').filter({ hasText: 'Not valid JSON' }).waitFor();
    assert.deepEqual(await server.client.runs.list(threadId), [], 'nothing was sent');

    // Long enough that only the cancel can end it.
    await extra.fill('{"delay_ms": 600000}');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'running' }).waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'interrupted' }).waitFor();
    const [cancelled] = await server.client.runs.list(threadId);
    assert.equal(cancelled.status, 'interrupted');
    // The extra key went into the run's input beside the message.
    const input = asObject(kwargsOf(cancelled).input);
    assert.equal(input.delay_ms, 600000);
    assert.equal(asObjects(input.messages).length, 1);
    await screenshot(page, 'studio-cancelled');
  });

  it('shows the API error when saving an assistant that was deleted elsewhere', async () => {
    const other = await server.client.assistants.create({ graphId: 'chat', name: 'Short-lived', context: {} });
    await page.goto(`${server.url}/ui/#/assistants/${other.assistant_id}`);
    await page.getByRole('heading', { name: 'Short-lived', level: 2 }).waitFor();
    await server.client.assistants.delete(other.assistant_id);
    await page.locator('form.assistant-form').getByRole('button', { name: 'Save as new version' }).click();
    const alert = page.locator('form.assistant-form [role="alert"]');
    await alert.waitFor();
    assert.match((await alert.textContent())!, /not found/i);
  });

  it('asks for the API key when the server answers 401, keeps it for the tab, and lists the assistants with it', async () => {
    const guarded = await startTestServer({ auth: { api_keys: ['secret-key'] } });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const guardedPage = await context.newPage();
      guardedPage.on('pageerror', (error) => pageErrors.push(error.message));
      const keysSent: (string | undefined)[] = [];
      guardedPage.on('request', (request) => {
        if (request.url().endsWith('/assistants/search')) keysSent.push(request.headers()['x-api-key']);
      });
      // The page itself needs no key; the API calls it makes do, and the first 401 opens the dialog.
      await guardedPage.goto(`${guarded.url}/ui/`);
      const dialog = guardedPage.getByRole('dialog', { name: 'API key' });
      await dialog.waitFor();
      assert.match((await dialog.getByRole('alert').textContent())!, /needs an API key/);
      await screenshot(guardedPage, 'api-key-asked');
      // A wrong key is refused and asked for again.
      await dialog.getByLabel('Key').fill('wrong-key');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.getByRole('alert').filter({ hasText: 'refused this key' }).waitFor();
      await dialog.getByLabel('Key').fill('secret-key');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await guardedPage.locator('table.assistants').getByRole('link', { name: 'chat', exact: true }).waitFor();
      assert.equal(await dialog.count(), 0);
      assert.equal(await guardedPage.locator('.list [role="alert"]').count(), 0);
      assert.deepEqual(keysSent.slice(0, 1), [undefined]);
      assert.equal(keysSent.at(-1), 'secret-key');

      // The key is kept for the tab (sessionStorage): a reload asks nothing and lists at once.
      await guardedPage.reload();
      await guardedPage.locator('table.assistants').getByRole('link', { name: 'chat', exact: true }).waitFor();
      assert.equal(await dialog.count(), 0);
      assert.equal(await guardedPage.evaluate('sessionStorage.getItem("tracepipe.api_key")'), 'secret-key');

      // Dismissed once, the page stops asking and says why the list is empty.
      await guardedPage.evaluate('sessionStorage.clear()');
      await guardedPage.reload();
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      const alert = guardedPage.locator('.list [role="alert"]');
      await alert.waitFor();
      assert.match((await alert.textContent())!, /X-Api-Key.*Set the API key/);
      assert.equal(await dialog.count(), 0);
    } finally {
      await context.close();
      await guarded.stop();
    }
  });

  it("sends a `Bearer` key as the Authorization header, for a custom auth handler, and lists only that user's assistants", async () => {
    const guarded = await startTestServer({
      langgraph_config: fileURLToPath(new URL('./testdata/auth/langgraph.json', import.meta.url)),
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const as = (user: string) =>
        new Client({
          apiUrl: guarded.url,
          apiKey: null,
          defaultHeaders: { authorization: `Bearer ${user}:me assistants:write` },
          callerOptions: { maxRetries: 0 },
        });
      await as('johndoe').assistants.create({ graphId: 'agent', name: 'John’s helper' });
      await as('alice').assistants.create({ graphId: 'agent', name: 'Alice’s helper' });
      const guardedPage = await context.newPage();
      guardedPage.on('pageerror', (error) => pageErrors.push(error.message));
      await guardedPage.goto(`${guarded.url}/ui/`);
      const dialog = guardedPage.getByRole('dialog', { name: 'API key' });
      await dialog.getByLabel('Key').fill('Bearer johndoe:me assistants:write');
      await dialog.getByRole('button', { name: 'Save' }).click();
      const table = guardedPage.locator('table.assistants');
      await table.getByRole('link', { name: 'John’s helper' }).waitFor();
      assert.equal(await table.getByRole('link', { name: 'Alice’s helper' }).count(), 0);
    } finally {
      await context.close();
      await guarded.stop();
    }
  });

  it('deletes an assistant after confirmation, and not when cancelled', async () => {
    const [pirate] = await server.client.assistants.search({ name: 'Pirate' });
    await page.goto(`${server.url}/ui/#/assistants/${pirate.assistant_id}`);
    await page.getByRole('heading', { name: 'Pirate', level: 2 }).waitFor();

    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this assistant?' });
    await dialog.waitFor();
    await screenshot(page, 'delete-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await server.client.assistants.get(pirate.assistant_id)).name, 'Pirate');

    await page.getByRole('button', { name: 'Delete…' }).click();
    await dialog.getByRole('button', { name: 'Delete assistant' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Pirate” and all its versions.' }).waitFor();
    await page.locator('table.assistants').getByRole('link', { name: 'Pirate' }).waitFor({ state: 'detached' });
    assert.deepEqual(await server.client.assistants.search({ name: 'Pirate' }), []);
    await assert.rejects(server.client.assistants.get(pirate.assistant_id), /HTTP 404/);
  });
});

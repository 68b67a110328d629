// The Crons and Deployment screens of the web interface in Debian's Chromium (playwright-core)
// against a real server: a cron is created through the form, disabled and enabled again, and
// deleted after a confirmation (each outcome checked through the SDK); an invalid schedule is
// refused on the page, and one the server refuses shows the server's message; the Deployment page
// shows the MCP and A2A addresses. Screenshots land in the temporary directory.

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

describe('agent_api web interface: crons and deployment', { skip: noChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer();
    browser = await launchChromium(chromium);
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'the page threw');
  });

  it('creates, disables, enables and deletes a cron', async () => {
    await page.goto(`${server.url}/ui/#/crons`);
    await page.getByRole('heading', { name: 'Crons', level: 1 }).waitFor();
    await page.getByText('No crons yet.').waitFor();
    const form = page.locator('form.cron-form');
    await form.getByLabel('Assistant').selectOption({ label: 'agent (agent)' });
    await form.getByLabel('Schedule (UTC)').fill('*/30 * * * *');
    await form.getByLabel('Message (optional)').fill('Daily digest please');
    await form.getByLabel('Keep each run’s thread').check();
    await form.getByRole('button', { name: 'Create cron' }).click();
    await page.getByRole('status').filter({ hasText: 'Created the cron “*/30 * * * *”' }).waitFor();
    const row = page.locator('table.crons tbody tr');
    await row.filter({ hasText: '*/30 * * * *' }).waitFor();
    await page.screenshot({ path: join(tmpdir(), 'tracepipe-ui-crons.png'), fullPage: true });

    const [cron] = await server.client.crons.search({});
    assert.ok(cron);
    assert.equal(cron.schedule, '*/30 * * * *');
    assert.equal(cron.on_run_completed, 'keep');
    assert.deepEqual(cron.payload.input, { messages: [{ role: 'user', content: 'Daily digest please' }] });

    await page.getByRole('button', { name: 'Disable cron */30 * * * * of agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Disabled the cron' }).waitFor();
    await row.filter({ hasText: 'disabled' }).waitFor();
    await eventually(async () => (await server.client.crons.search({ enabled: false })).length === 1, {
      message: 'the cron is disabled',
    });
    await page.getByRole('button', { name: 'Enable cron */30 * * * * of agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Enabled the cron' }).waitFor();
    await eventually(async () => (await server.client.crons.search({ enabled: true })).length === 1, {
      message: 'the cron is enabled',
    });

    // Cancelling the confirmation keeps it; confirming deletes it.
    await page.getByRole('button', { name: 'Delete cron */30 * * * * of agent' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await server.client.crons.count({}), 1);
    await page.getByRole('button', { name: 'Delete cron */30 * * * * of agent' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete cron' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted the cron' }).waitFor();
    await page.getByText('No crons yet.').waitFor();
    assert.equal(await server.client.crons.count({}), 0);
  });

  it('refuses a malformed schedule on the page and shows the server’s refusal', async () => {
    await page.goto(`${server.url}/ui/#/crons`);
    const form = page.locator('form.cron-form');
    await form.getByLabel('Schedule (UTC)').fill('* * *');
    await form.getByRole('button', { name: 'Create cron' }).click();
    await form.getByText('A schedule has 5 fields').waitFor();
    assert.equal(await form.getByLabel('Schedule (UTC)').getAttribute('aria-invalid'), 'true');
    await eventually(
      async () => (await page.evaluate('document.activeElement && document.activeElement.id')) === 'cron-schedule',
      { message: 'focus moves to the schedule' },
    );
    await form.getByLabel('Schedule (UTC)').fill('99 * * * *');
    await form.getByRole('button', { name: 'Create cron' }).click();
    await form.getByRole('alert').filter({ hasText: "Invalid cron schedule '99 * * * *'" }).waitFor();
    assert.equal(await server.client.crons.count({}), 0);
  });

  it('shows the MCP and A2A addresses on the Deployment page', async () => {
    await page.goto(`${server.url}/ui/#/deployment`);
    await page.getByRole('heading', { name: 'Deployment', level: 1 }).waitFor();
    assert.equal(await page.getByRole('textbox', { name: 'MCP address' }).inputValue(), `${server.url}/mcp`);
    const agent = await server.client.assistants.get('agent');
    assert.equal(
      await page.getByRole('textbox', { name: 'A2A address of agent', exact: true }).inputValue(),
      `${server.url}/a2a/${agent.assistant_id}`,
    );
    assert.equal(
      await page.getByRole('textbox', { name: 'Agent card of agent', exact: true }).inputValue(),
      `${server.url}/.well-known/agent-card.json?assistant_id=${agent.assistant_id}`,
    );
    await page.getByRole('button', { name: 'Copy MCP address' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Copied MCP address|Select and copy MCP address/ })
      .waitFor();
    await page.screenshot({ path: join(tmpdir(), 'tracepipe-ui-deployment.png'), fullPage: true });
  });
});

// Webhook destinations: which addresses a webhook may reach in every way of writing them (a
// table), the 422 at run creation for a URL naming a refused address, the check after DNS at send
// time, redirects that are not followed, and bounded retries. Real servers on loopback ports; the
// webhook receivers are plain node:http servers that count what reaches them.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Logger } from 'pino';
import { eventually } from 'tracepipe/testing';
import { AddressPolicy, allowListProblems, webhookUrlProblem } from './internal/net/address-policy.ts';
import { sendWebhook } from './internal/runs/webhook.ts';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { LogRecord } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('webhook address policy', () => {
  const none = AddressPolicy.fromAllowList([]);

  // [URL as a client writes it, the class it must be refused as (undefined: allowed)] with no allow-list.
  const table: [string, string | undefined][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://127.255.255.254:9/x', 'loopback'],
    ['http://\uff11\uff12\uff17.0.0.1/', 'loopback'], // full-width digits
    ['http://[::1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[0:0:0:0:0:ffff:127.0.0.1]/', 'loopback'],
    ['http://[::127.0.0.1]/', 'loopback'], // IPv4-compatible
    ['http://[::ffff:0:127.0.0.1]/', 'loopback'], // IPv4-translated
    ['http://[64:ff9b::127.0.0.1]/', 'loopback'], // NAT64
    ['http://10.0.0.1/', 'private'],
    ['http://0xa.0.0.1/', 'private'],
    ['http://167772161/', 'private'],
    ['http://172.16.5.4/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://[::ffff:a00:1]/', 'private'],
    ['http://[fc00::1]/', 'private'],
    ['http://[fd12:3456::1]/', 'private'],
    ['http://[fec0::1]/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'link_local'],
    ['http://2852039166/', 'link_local'],
    ['http://0xa9.0xfe.0xa9.0xfe/', 'link_local'],
    ['http://[::ffff:169.254.169.254]/', 'link_local'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://100.64.0.1/', 'cgnat'],
    ['http://100.127.255.254/', 'cgnat'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://192.0.2.1/', 'reserved'],
    ['http://[2001:db8::1]/', 'reserved'],
    ['http://[2002:7f00:1::1]/', 'reserved'], // 6to4
    ['http://[100::1]/', 'reserved'],
    ['http://8.8.8.8/', undefined],
    ['https://1.1.1.1:8443/hook', undefined],
    ['http://134744072/', undefined], // 8.8.8.8
    ['http://[2606:4700:4700::1111]/', undefined],
    ['http://[::ffff:8.8.8.8]/', undefined],
    ['http://[64:ff9b::8.8.8.8]/', undefined],
    // Names are checked when the webhook is sent, after resolution.
    ['https://hooks.example.com/x?token=1', undefined],
    ['http://localhost:8080/', undefined],
  ];

  for (const [url, refusedAs] of table) {
    it(`${url} → ${refusedAs ? `refused (${refusedAs})` : 'allowed'}`, () => {
      const problem = webhookUrlProblem(url, none);
      if (refusedAs === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? '', new RegExp(`\\(class ${refusedAs}\\)`));
    });
  }

  it('refuses other schemes, URLs with credentials and what is not a URL', () => {
    assert.match(webhookUrlProblem('ftp://example.com/', none)!, /http or https/);
    assert.match(webhookUrlProblem('file:///etc/passwd', none)!, /http or https/);
    assert.match(webhookUrlProblem('https://user:pw@example.com/', none)!, /user name or password/);
    assert.match(webhookUrlProblem('not a url', none)!, /not a valid absolute URL/);
    assert.match(webhookUrlProblem('http://[fe80::1%25eth0]/', none)!, /not a valid absolute URL/);
  });

  it('allows the classes and CIDR ranges an allow-list names, in every spelling, and nothing more', () => {
    const policy = AddressPolicy.fromAllowList(['loopback', '10.1.2.0/24', 'fd00:1::/32']);
    for (const url of [
      'http://127.0.0.1/',
      'http://0x7f.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://10.1.2.7/',
      'http://167838215/',
      'http://[::ffff:10.1.2.7]/',
      'http://[fd00:1::5]/',
    ]) {
      assert.equal(webhookUrlProblem(url, policy), undefined, url);
    }
    for (const url of [
      'http://10.1.3.1/',
      'http://10.0.0.1/',
      'http://169.254.169.254/',
      'http://[fd00:2::5]/',
      'http://100.64.0.1/',
    ]) {
      assert.notEqual(webhookUrlProblem(url, policy), undefined, url);
    }
    assert.equal(policy.check('::ffff:10.1.2.9').allowed, true);
    assert.equal(policy.check('fe80::1').allowed, false);
  });

  it('reports allow-list entries that are neither a class nor a CIDR range', () => {
    assert.deepEqual(allowListProblems(['loopback', '10.0.0.0/8', '::1/128'], 'webhooks.allow'), []);
    const problems = allowListProblems(['lo', '10.0.0.0/33', '10.0.0.1'], 'webhooks.allow');
    assert.equal(problems.length, 3);
    assert.match(problems[0]!, /^webhooks\.allow\[0\]: "lo"/);
    assert.throws(() => AddressPolicy.fromAllowList(['private', 'nope']), /webhooks\.allow\[1\]/);
  });
});

/** A webhook receiver that records each request and answers with `answer`. */
interface Hook {
  readonly port: number;
  readonly received: { method: string; url: string; body: string }[];
  close(): Promise<void>;
}

async function startHook(
  answer: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.end('ok'),
): Promise<Hook> {
  const received: Hook['received'] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', body });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The value of the webhook failure counter on the server's /metrics. */
async function webhookFailures(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('tracepipe_agent_webhook_failures_total'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** A logger that keeps its records, to check what was logged and why. */
function capturingLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  return {
    logger: pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) }),
    records,
  };
}

describe('webhooks on a server with the default policy (no loopback)', () => {
  let server: TestServer;
  let hook: Hook;
  const log = capturingLogger();
  before(async () => {
    server = await startTestServer({ logger: log.logger });
    hook = await startHook();
  });
  after(async () => {
    await hook.close();
    await server.stop();
  });

  it('refuses a run whose webhook URL names a refused address with 422, creating nothing', async () => {
    const thread = await server.client.threads.create();
    const urls = [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://10.0.0.1/',
      `http://2130706433:${hook.port}/hook`,
      `http://0x7f.1:${hook.port}/hook`,
      `http://0177.0.0.1:${hook.port}/hook`,
      `http://127.1:${hook.port}/hook`,
      `http://[::ffff:127.0.0.1]:${hook.port}/hook`,
      `http://[::1]:${hook.port}/hook`,
    ];
    for (const webhook of urls) {
      const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ assistant_id: 'agent', input: ask('hi'), webhook }),
      });
      assert.equal(response.status, 422, webhook);
      const body = (await response.json()) as { code: string; message: string };
      assert.equal(body.code, 'TP_ERR_API_INVALID');
      assert.match(
        body.message,
        /^body\.webhook: names a refused address: .* \(class [a-z_]+\), which webhooks\.allow does not list$/,
        webhook,
      );
    }
    // The SDK shows the same message; threadless runs and batches are checked too.
    await assert.rejects(
      server.client.runs.wait(null, 'agent', { input: ask('hi'), webhook: 'http://100.64.1.1/' }),
      /HTTP 422: .*body\.webhook: names a refused address: 100\.64\.1\.1 is a carrier-grade NAT/,
    );
    const batch = await fetch(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ assistant_id: 'agent', input: ask('hi'), webhook: 'http://192.168.0.1/' }]),
    });
    assert.equal(batch.status, 422);
    assert.deepEqual(await server.client.runs.list(thread.thread_id), []);
    assert.equal(hook.received.length, 0);
  });

  it('refuses at send time a hostname that resolves to a refused address (localhost), sending nothing', async () => {
    const before = await webhookFailures(server);
    const thread = await server.client.threads.create();
    const run = await server.client.runs.create(thread.thread_id, 'agent', {
      input: ask('hook'),
      webhook: `http://localhost:${hook.port}/hook`,
    });
    await server.client.runs.join(thread.thread_id, run.run_id);
    assert.equal(
      (await server.client.runs.get(thread.thread_id, run.run_id)).status,
      'success',
      'the run itself is unaffected',
    );
    await eventually(async () => (await webhookFailures(server)) === before + 1, {
      message: 'the refused delivery to be counted',
    });
    assert.equal(hook.received.length, 0);
    // Refused after resolution, on the first attempt (a refusal is not retried); the URL is logged without its query.
    const warning = log.records.find((record) => record.msg === 'Could not deliver a run webhook.');
    assert.ok(warning?.err, 'the refusal is logged');
    assert.match(
      warning.err.message,
      /^localhost resolves to a refused address: (127\.0\.0\.1|::1) is a loopback address \(class loopback\)/,
    );
    assert.equal(warning.attempts, 1);
    assert.equal(warning.url, `http://localhost:${hook.port}/hook`);
    assert.equal(warning.level, 40, 'a warning, not an error');
  });
});

describe('webhooks on a server that allows loopback', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ webhooks: { allow: ['loopback'], timeout_ms: 5000, max_attempts: 2 } } as never);
  });
  after(async () => {
    await server.stop();
  });

  it('delivers to a hostname that resolves to an allowed address', async () => {
    const hook = await startHook();
    try {
      const thread = await server.client.threads.create();
      const run = await server.client.runs.create(thread.thread_id, 'agent', {
        input: ask('by name'),
        webhook: `http://localhost:${hook.port}/hook?token=t`,
      });
      await eventually(async () => hook.received.length === 1, { message: 'the webhook' });
      const body = JSON.parse(hook.received[0]!.body) as { run_id: string; status: string };
      assert.equal(body.run_id, run.run_id);
      assert.equal(body.status, 'success');
      assert.equal(hook.received[0]!.url, '/hook?token=t');
    } finally {
      await hook.close();
    }
  });

  it('does not follow a redirect: the 307 target receives nothing and the delivery fails once', async () => {
    const target = await startHook();
    const redirecting = await startHook((_request, response) => {
      response.writeHead(307, { location: `http://127.0.0.1:${target.port}/stolen` }).end();
    });
    try {
      const before = await webhookFailures(server);
      const thread = await server.client.threads.create();
      await server.client.runs.create(thread.thread_id, 'agent', {
        input: ask('redirect'),
        webhook: `http://127.0.0.1:${redirecting.port}/hook`,
      });
      await eventually(async () => (await webhookFailures(server)) === before + 1, {
        message: 'the failed delivery to be counted',
      });
      assert.equal(redirecting.received.length, 1, 'a redirect is final: no retry');
      assert.equal(target.received.length, 0);
    } finally {
      await redirecting.close();
      await target.close();
    }
  });

  it('retries a 503 up to max_attempts, then counts one failure', async () => {
    const failing = await startHook((_request, response) => {
      response.writeHead(503).end();
    });
    try {
      const before = await webhookFailures(server);
      const thread = await server.client.threads.create();
      await server.client.runs.create(thread.thread_id, 'agent', {
        input: ask('retry'),
        webhook: `http://127.0.0.1:${failing.port}/hook`,
      });
      await eventually(async () => (await webhookFailures(server)) === before + 1, {
        message: 'the failed delivery to be counted',
      });
      assert.equal(failing.received.length, 2);
    } finally {
      await failing.close();
    }
  });

  it('still refuses what the allow-list does not name', async () => {
    const thread = await server.client.threads.create();
    await assert.rejects(
      server.client.runs.create(thread.thread_id, 'agent', { input: ask('x'), webhook: 'http://169.254.169.254/' }),
      /HTTP 422: .*link-local address \(class link_local\)/,
    );
  });
});

describe('sendWebhook', () => {
  it('checks an IP-address host again when sending (a run stored before the policy changed)', async () => {
    const hook = await startHook();
    try {
      const failures: Record<string, unknown>[] = [];
      const run = {
        run_id: 'r1',
        thread_id: 't1',
        assistant_id: 'a1',
        created_at: '',
        updated_at: '',
        status: 'success',
        metadata: {},
        kwargs: {},
        multitask_strategy: 'reject',
        error: null,
        attempt: 1,
        temporary: false,
      };
      const options = { policy: AddressPolicy.fromAllowList([]), timeoutMs: 2000, maxAttempts: 3 };
      await sendWebhook(
        `http://127.0.0.1:${hook.port}/hook`,
        { run: run as never, status: 'success', startedAt: '' },
        options,
        (fields) => failures.push(fields),
      );
      assert.equal(failures.length, 1);
      const failure = failures[0]!;
      assert.ok(failure.err instanceof Error, `the failure carries its error: ${JSON.stringify(failure)}`);
      assert.match(failure.err.message, /^refused address: 127\.0\.0\.1 is a loopback address/);
      assert.equal(failure.attempts, 1);
      assert.equal(hook.received.length, 0);
      // The same webhook with loopback allowed is delivered.
      await sendWebhook(
        `http://127.0.0.1:${hook.port}/hook`,
        { run: run as never, status: 'success', startedAt: '' },
        { ...options, policy: AddressPolicy.fromAllowList(['loopback']) },
        (fields) => failures.push(fields),
      );
      assert.equal(failures.length, 1);
      assert.equal(hook.received.length, 1);
    } finally {
      await hook.close();
    }
  });
});

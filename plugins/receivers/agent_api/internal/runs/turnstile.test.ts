// The turnstile runs pass between their steps: waiting runs go through one per turn of the event
// loop, in order, and a request arriving on a socket while runs keep the process busy is read and
// answered between their steps, not after all of them.

import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Turnstile } from './turnstile.ts';

/** Keeps the thread busy for `ms` without leaving it (what a graph step on a synchronous driver does). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('Turnstile', () => {
  it('lets waiting runs through in order, one per turn of the event loop', async () => {
    const turnstile = new Turnstile();
    const order: string[] = [];
    const passes = ['a', 'b', 'c'].map((name) => turnstile.pass().then(() => order.push(name)));
    // Queued after the first pass was scheduled: comes after it, before the next.
    setImmediate(() => order.push('other work'));
    await Promise.all(passes);
    assert.deepEqual(order, ['a', 'other work', 'b', 'c']);
  });

  it('a request arriving while runs keep the process busy is answered between their steps', async () => {
    const turnstile = new Turnstile();
    let stepsDone = 0;
    let stepsWhenAnswered: number | undefined;
    const server = createServer((_, response) => {
      stepsWhenAnswered = stepsDone;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const RUNS = 4;
    const STEPS = 40;
    try {
      // The runs start first, and leave their chain of promise jobs only through the turnstile.
      const runs = Array.from({ length: RUNS }, async () => {
        for (let step = 0; step < STEPS; step++) {
          spin(1);
          stepsDone++;
          await turnstile.pass();
        }
      });
      // Connecting, sending, reading and answering each need the event loop to reach its poll phase.
      const answered = new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/' }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve(body));
        })
          .on('error', reject)
          .end();
      });
      await Promise.all(runs);
      assert.equal(await answered, 'ok');
      assert.ok(stepsWhenAnswered !== undefined, 'the request was answered');
      assert.ok(
        stepsWhenAnswered < RUNS * STEPS,
        `answered after ${stepsWhenAnswered} of ${RUNS * STEPS} steps, not once every run had ended`,
      );
    } finally {
      server.close();
    }
  });
});

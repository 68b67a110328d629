import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Consumer } from '../pipeline/component.ts';
import type { RequestContext } from '../pipeline/data.ts';
import type { Release } from '../pipeline/delivery.ts';
import { holdDelivery } from '../pipeline/delivery.ts';
import { ThrottleError } from '../pipeline/errors.ts';
import type { SpanBatch } from '../model/spans.ts';
import { nopSettings } from '../pipeline/testing.ts';
import { eventually } from '../testkit/eventually.ts';
import { makeBatch, plainSpan } from '../testkit/spans.ts';
import { DurableIntake, IntakeUnavailableError, JournalRecordTooLargeError } from './intake.ts';
import { Journal } from './journal.ts';
import type { JournalConfig } from './schema.ts';

const directories: string[] = [];
after(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

/** A downstream that keeps what it takes, like a batcher, until told to let go. */
class HoldingConsumer implements Consumer<'spans'> {
  readonly mutatesData = false;
  readonly taken: { name: string; context: RequestContext }[] = [];
  readonly holds: Release[] = [];
  refuse?: Error;

  async consume(data: SpanBatch, context: RequestContext): Promise<void> {
    if (this.refuse) throw this.refuse;
    this.taken.push({ name: nameOf(data), context });
    this.holds.push(holdDelivery(context.delivery));
  }

  releaseAll(): void {
    for (const release of this.holds.splice(0)) release();
  }
}

/** A one-span batch whose span name carries the request's text (what the tests follow). */
function batchNamed(name: string): SpanBatch {
  return makeBatch([plainSpan({ name })]);
}

function nameOf(batch: SpanBatch): string {
  return batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name;
}

/** Whether one of the journal's segment files holds `bytes`. */
function segmentsHold(directory: string, bytes: Buffer): boolean {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.journal'))
    .some((name) => readFileSync(join(directory, name)).includes(bytes));
}

async function journalConfig(overrides: Partial<JournalConfig> = {}): Promise<JournalConfig> {
  const directory = await mkdtemp(join(tmpdir(), 'tp-intake-'));
  directories.push(directory);
  return { enabled: true, directory, max_bytes: 1 << 30, segment_bytes: 1 << 20, fsync_interval_ms: 0, ...overrides };
}

function intake(next: Consumer<'spans'>, journal: JournalConfig | undefined, memoryLimitBytes = 1 << 30) {
  return new DurableIntake<'spans', { name: string; project: string }>({
    settings: nopSettings('receiver', 'otlp'),
    dataType: 'spans',
    journal,
    memoryLimitBytes,
    next,
    restore: (header) => ({ data: batchNamed(header.name), context: { project: header.project } }),
  });
}

async function accept(target: ReturnType<typeof intake>, name: string, bodyBytes = name.length): Promise<void> {
  await target.accept({ name, project: 'p' }, Buffer.alloc(bodyBytes, name), () => batchNamed(name), { project: 'p' });
}

/** How many requests the journal holds unsettled: what the next start would replay. */
async function unsettledRequests(journal: JournalConfig): Promise<number> {
  const reader = new Journal({
    directory: journal.directory,
    maxBytes: journal.max_bytes,
    segmentBytes: journal.segment_bytes,
    fsyncIntervalMs: 0,
  });
  const { records } = await reader.open();
  await reader.close();
  return records;
}

describe('durable intake', () => {
  it('replays at the next start every acknowledged request still held downstream, and only those', async () => {
    const journal = await journalConfig();
    const first = new HoldingConsumer();
    const before = intake(first, journal);
    await before.start();
    for (const name of ['a', 'b', 'c', 'd']) await accept(before, name);
    assert.equal(first.taken.length, 4);
    assert.equal(first.taken[0]!.context.delivery?.durable, true);
    // `a` and `c` reach their destination; `b` and `d` are still held when the process stops.
    first.holds[0]!();
    first.holds[2]!();
    await before.shutdown();

    const second = new HoldingConsumer();
    const after = intake(second, journal);
    await after.start();
    await eventually(() => second.taken.length === 2);
    assert.deepEqual(
      second.taken.map((taken) => taken.name),
      ['b', 'd'],
    );
    second.releaseAll();
    first.releaseAll(); // late settlements of the first run change nothing
    await after.shutdown();
    assert.deepEqual(
      (await readdir(journal.directory)).filter((name) => name.endsWith('.journal')),
      [],
    );
  });

  it('delivers a request again from the journal when downstream gives it up without storing it', async () => {
    const journal = await journalConfig();
    const next = new HoldingConsumer();
    const target = intake(next, journal);
    await target.start();
    await accept(target, 'given up', 1000);
    const { delivery } = next.taken[0]!.context;
    // An exporter that could neither send nor store it (a full disk) abandons its hold.
    delivery!.retain();
    next.releaseAll();
    delivery!.abandon();
    await eventually(() => next.taken.length === 2);
    assert.equal(next.taken[1]!.name, 'given up');
    next.releaseAll();
    await target.shutdown();
    assert.deepEqual(
      (await readdir(journal.directory)).filter((name) => name.endsWith('.journal')),
      [],
    );
  });

  it('forgets a request the pipeline refused: the client was not acknowledged and sends it again', async () => {
    const journal = await journalConfig();
    const next = new HoldingConsumer();
    next.refuse = new ThrottleError('full', 100);
    const target = intake(next, journal);
    await target.start();
    await assert.rejects(accept(target, 'refused'), ThrottleError);
    next.refuse = undefined;
    await target.shutdown();
    assert.equal(await unsettledRequests(journal), 0);
  });

  it('answers a full journal with IntakeUnavailableError and accepts again once it has room', async () => {
    const journal = await journalConfig({ max_bytes: 65536, segment_bytes: 4096 });
    const next = new HoldingConsumer();
    const target = intake(next, journal);
    await target.start();
    for (let i = 0; i < 2; i++) await accept(target, `x${i}`, 25_000);
    await assert.rejects(accept(target, 'x2', 25_000), IntakeUnavailableError);
    await assert.rejects(accept(target, 'y', 70_000), JournalRecordTooLargeError);
    next.holds[0]!();
    await accept(target, 'x2', 25_000);
    next.releaseAll();
    await target.shutdown();
  });

  it('answers bad input and empty requests as such when the journal is full', async () => {
    const journal = await journalConfig({ max_bytes: 65536, segment_bytes: 4096 });
    const next = new HoldingConsumer();
    const target = intake(next, journal, 1 << 20);
    await target.start();
    for (let i = 0; i < 2; i++) await accept(target, `x${i}`, 25_000);
    const body = Buffer.alloc(25_000);
    const malformed = () => {
      throw new Error('malformed body');
    };
    await assert.rejects(
      target.accept({ name: 'm', project: 'p' }, body, malformed, { project: 'p' }),
      /malformed body/,
    );
    let decodes = 0;
    await target.accept({ name: 'e', project: 'p' }, body, () => void decodes++, { project: 'p' });
    assert.equal(decodes, 1);
    await assert.rejects(accept(target, 'x2', 25_000), IntakeUnavailableError);
    assert.equal(next.taken.length, 2);
    next.releaseAll();
    target.admit(1 << 19).abandon(); // nothing is held in memory
    await target.shutdown();
  });

  it('bounds the bytes held in memory: refuses with ThrottleError past the limit, with or without a journal', async () => {
    for (const journal of [await journalConfig(), undefined]) {
      const next = new HoldingConsumer();
      const target = intake(next, journal, 10);
      await target.start();
      await accept(target, 'big', 16); // an empty pipeline takes any one request
      await assert.rejects(accept(target, 'more'), ThrottleError);
      next.releaseAll();
      await accept(target, 'more');
      next.releaseAll();
      await target.shutdown();
    }
  });

  it('counts a request from its admission, before its body is read, at five times its size until taken', async () => {
    const next = new HoldingConsumer();
    const target = intake(next, undefined, 1000);
    await target.start();
    const reading = target.admit(100); // holds 500 while its body is read and decoded
    assert.throws(() => target.admit(101), ThrottleError); // 505 more would pass 1000
    const second = target.admit(100);
    assert.throws(() => target.admit(1), ThrottleError);
    second.abandon();
    reading.abandon();
    // Once the pipeline has taken a request, it holds its own size until delivered.
    await target.accept({ name: 'taken', project: 'p' }, Buffer.alloc(150), () => batchNamed('taken'), {
      project: 'p',
    });
    target.admit(170).abandon(); // 150 + 850 fits
    assert.throws(() => target.admit(171), ThrottleError);
    next.releaseAll();
    target.admit(200).abandon(); // delivered: nothing held
    await target.shutdown();
  });

  it('refuses before journaling and decoding while the pipeline refuses everything', async () => {
    const journal = await journalConfig();
    const refusal = new ThrottleError('memory limiter: above its soft limit', 1000);
    let refusing = true;
    const next = Object.assign(new HoldingConsumer(), { refusal: () => (refusing ? refusal : undefined) });
    const target = intake(next, journal, 1000);
    await target.start();
    let decoded = 0;
    const decode = (name: string) => () => (decoded++, batchNamed(name));
    await assert.rejects(
      target.accept(
        { name: 'refused', project: 'p' },
        Buffer.from('refused'),
        decode('refused'),
        { project: 'p' },
        target.admit(100),
      ),
      (error) => error === refusal,
    );
    // Neither journaled nor decoded, and nothing is held for it: the whole bound is free.
    assert.equal(segmentsHold(journal.directory, Buffer.from('refused')), false);
    assert.equal(decoded, 0);
    refusing = false;
    target.admit(200).abandon();
    await target.accept(
      { name: 'taken', project: 'p' },
      Buffer.from('taken'),
      decode('taken'),
      { project: 'p' },
      target.admit(100),
    );
    assert.deepEqual(
      next.taken.map((taken) => taken.name),
      ['taken'],
    );
    assert.equal(segmentsHold(journal.directory, Buffer.from('taken')), true);
    next.releaseAll();
    await target.shutdown();
  });

  it('gives an admission back when the request is refused, whoever refused it', async () => {
    const next = new HoldingConsumer();
    const target = intake(next, undefined, 1000);
    await target.start();
    next.refuse = new Error('downstream is broken');
    const admission = target.admit(100);
    await assert.rejects(
      target.accept({ name: 'x', project: 'p' }, Buffer.alloc(100), () => batchNamed('x'), { project: 'p' }, admission),
      /downstream is broken/,
    );
    admission.abandon(); // the intake released it already: not released twice
    target.admit(200).abandon(); // the whole limit is free again
    await target.shutdown();
  });

  it('decodes a request only once its body is in the journal', async () => {
    const journal = await journalConfig();
    const next = new HoldingConsumer();
    const target = intake(next, journal);
    await target.start();
    const body = Buffer.from('the body of a request');
    let journaledBeforeDecode = false;
    await target.accept(
      { name: 'x', project: 'p' },
      body,
      () => {
        journaledBeforeDecode = segmentsHold(journal.directory, body);
        return batchNamed('x');
      },
      { project: 'p' },
    );
    assert.equal(journaledBeforeDecode, true);
    next.releaseAll();
    await target.shutdown();
  });

  it('settles at once a journaled request that fails to decode or holds nothing: never replayed', async () => {
    const journal = await journalConfig();
    const next = new HoldingConsumer();
    const target = intake(next, journal, 1000);
    await target.start();
    await assert.rejects(
      target.accept(
        { name: 'malformed', project: 'p' },
        Buffer.alloc(100),
        () => {
          throw new Error('malformed body');
        },
        { project: 'p' },
      ),
      /malformed body/,
    );
    await target.accept({ name: 'empty', project: 'p' }, Buffer.alloc(100), () => undefined, { project: 'p' });
    assert.deepEqual(next.taken, []);
    target.admit(200).abandon(); // both admissions were given back: the whole limit is free
    await target.shutdown();
    assert.equal(await unsettledRequests(journal), 0);
  });
});

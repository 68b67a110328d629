// The thread that reads graph types runs at the lowest priority, and only that thread: the
// server's event loop keeps its own (Linux, where a thread's nice value is its own).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { TypeSchemaExtraction } from './index.ts';

const ANNOTATED_GRAPH = fileURLToPath(new URL('../../../testing/graphs/typed/annotated.ts', import.meta.url));

/** The nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      values.set(Number(tid), Number(fields[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return values;
}

describe('type extraction worker priority', { skip: process.platform !== 'linux' }, () => {
  it('the worker thread runs at nice 19 while the main thread keeps its priority', async () => {
    const mainNice = threadNiceValues().get(process.pid);
    const extraction = TypeSchemaExtraction.start(
      [{ graphId: 'annotated', path: ANNOTATED_GRAPH, exportName: 'graph' }],
      {
        timeoutMs: 600_000,
        logger: pino({ level: 'silent' }),
      },
    );
    let done = false;
    const result = extraction.get('annotated').finally(() => (done = true));
    let seenLowest = false;
    while (!done && !seenLowest) {
      seenLowest = [...threadNiceValues()].some(([tid, nice]) => tid !== process.pid && nice === 19);
      await sleep(20);
    }
    await extraction.close('the test ended');
    await result;
    assert.equal(seenLowest, true, 'a thread at nice 19 while the extraction ran');
    assert.equal(threadNiceValues().get(process.pid), mainNice);
  });
});

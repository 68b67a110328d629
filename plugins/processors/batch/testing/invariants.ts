// For tests: the invariants every output of the `batch` processor keeps, checked over what a Sink
// after it received. Used by the processor's own tests and by the pipeline tests that put it
// behind `genai`.

import assert from 'node:assert/strict';
import type { Run } from 'tracepipe/plugin';
import type { Sink } from 'tracepipe/testing';
import { dottedOrderIds, segmentTime } from '../internal/dotted-order.ts';

export interface BatchInvariantOptions {
  /** The batch processor's `batch_size` and `max_batch_bytes`. */
  readonly limits: { readonly batchSize: number; readonly maxBytes: number };
  /** The API key each run must leave with. */
  readonly keyOf: (run: Run) => string | undefined;
  /** Orphans attached under a trace root that never came may leave before that root. */
  readonly phantomRoots?: boolean;
}

/**
 * Each run has a dotted order whose first segment's id is the trace id, whose last is the run id,
 * whose second-to-last is the parent; segment times are the runs' start times; a parent leaves no
 * later than its children (unless `phantomRoots`); no run leaves twice; batches stay within their
 * limits (but for a run larger than a batch, alone in its own), carry no tree hints and never mix API keys.
 */
export function assertBatchInvariants(sink: Sink<'runs'>, options: BatchInvariantOptions): void {
  const { limits, keyOf, phantomRoots = false } = options;
  const seen = new Set<string>();
  for (const { data, context } of sink.batches) {
    assert.ok(data.runs.length <= limits.batchSize, `batch of ${data.runs.length} runs`);
    const bytes = data.runs.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0);
    // A run larger than a batch may be leaves alone.
    assert.ok(bytes <= limits.maxBytes || data.runs.length === 1, `batch of ${bytes} bytes`);
    assert.equal(data.hints, undefined);
    for (const item of data.runs) {
      assert.ok(item.dotted_order, `run ${item.id} has no dotted_order`);
      const ids = dottedOrderIds(item.dotted_order);
      assert.equal(ids[0], item.trace_id, `first segment of ${item.id}`);
      assert.equal(ids.at(-1), item.id);
      if (item.parent_run_id === undefined) assert.equal(ids.length, 1);
      else assert.equal(ids.at(-2), item.parent_run_id);
      assert.ok(item.dotted_order.endsWith(`${segmentTime(item.start_time)}${item.id}`));
      if (item.parent_run_id !== undefined && !(phantomRoots && item.parent_run_id === item.trace_id)) {
        assert.ok(seen.has(item.parent_run_id), `parent of ${item.id} left after it`);
      }
      assert.ok(!seen.has(item.id), `run ${item.id} left twice`);
      seen.add(item.id);
      assert.ok(item.session_name !== undefined);
      assert.equal(context.apiKey, keyOf(item), `run ${item.id} uploaded with another tenant's key`);
    }
  }
}

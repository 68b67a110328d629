// Latency statistics and a fixed-concurrency driver for the agent server benchmark.

/**
 * Runs `total` operations with `concurrency` of them in flight; returns each one's latency (ms) and
 * the wall time. An operation that resolves to a number gives its own latency (ms), e.g. the time
 * to a first event.
 */
export async function drive(
  total: number,
  concurrency: number,
  operation: (worker: number, index: number) => Promise<void | number>,
): Promise<{ latenciesMs: number[]; wallMs: number; failures: number; firstError?: unknown }> {
  const latenciesMs: number[] = [];
  let next = 0;
  let failures = 0;
  let firstError: unknown;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let index = next++; index < total; index = next++) {
        const begin = performance.now();
        try {
          const own = await operation(worker, index);
          latenciesMs.push(typeof own === 'number' ? own : performance.now() - begin);
        } catch (error) {
          failures++;
          firstError ??= error;
        }
      }
    }),
  );
  return { latenciesMs, wallMs: performance.now() - started, failures, firstError };
}

/**
 * Runs `operation` with `concurrency` in flight until `seconds` have passed (each one in flight
 * then finishes); returns how many ran and how many failed. For warming a server up by time, so
 * that a fast and a slow server get the same time to reach their steady state.
 */
export async function driveFor(
  seconds: number,
  concurrency: number,
  operation: (index: number) => Promise<unknown>,
): Promise<{ count: number; failures: number; firstError?: unknown }> {
  const deadline = performance.now() + seconds * 1000;
  let next = 0;
  let failures = 0;
  let firstError: unknown;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          await operation(next++);
        } catch (error) {
          failures++;
          firstError ??= error;
        }
      }
    }),
  );
  return { count: next, failures, firstError };
}

/** The q-quantile (0..1) by the nearest-rank method. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** The median: the middle value, or the mean of the middle two when the count is even. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

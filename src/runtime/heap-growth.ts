// Keeps V8 from letting garbage pile up to several times what a process holds.
//
// After each full collection V8 sets the size at which the next one starts: what survived times a
// growing factor that it picks between 1.1 and 4 from how fast it collects against how fast the
// program allocates. A pipeline under a load it cannot keep up with is the case that picks 4:
// requests wait longer, so their objects outlive two young collections and are moved to the old
// generation, where they die, and collecting them is quick. Measured on the proxy
// (bench/pipeline/README.md, "heap growth"): at 30,000 held-out spans/s offered (three times what
// the machine sustained) the full collections found 77–95 MB alive and ran at 300–380 MB, and the
// RSS peaked at 567–659 MB; with a fixed factor of 1.5, at 318–322 MB. Under loads it keeps up
// with, the proxy's and the agent server's CPU per span and per run did not move beyond their
// noise. So tracepipe fixes the factor at 1.5 when it starts.

import { setFlagsFromString } from 'node:v8';

/** The heap may grow by this much over what the last full collection kept before the next one. */
export const HEAP_GROWING_PERCENT = 50;

/** Fixes V8's heap growing factor for this process (read at each full collection). Idempotent. */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

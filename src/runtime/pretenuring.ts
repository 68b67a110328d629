// Keeps V8 from allocating a request's objects straight into the old generation.
//
// V8 counts, for each object or array literal in the code (an "allocation site"), how many of its
// recent objects are still alive at a young-generation collection. When a collection finds nearly
// all of them alive (85 %), V8 decides that the site makes long-lived objects and compiles it to
// allocate in the old generation from then on ("allocation-site pretenuring"); it reconsiders only
// after a full collection finds the old generation mostly garbage. A pipeline breaks the rule the
// heuristic relies on: it decodes a whole request in one burst (thousands of attribute, value and
// span objects) and keeps all of it until the request is translated and batched, a few
// milliseconds later. A young collection that lands in between finds every object of those sites
// alive, and from then on each request's decoded spans — and the strings they point to, which
// cannot die young while an old object refers to them — live until the next full collection.
//
// Measured on the proxy (bench/pipeline/README.md, 2026-11-27, "pretenuring"): at 4,000 held-out
// spans/s, 157–186 MB were promoted in 20 s with it and 12–14 MB without, the peak RSS fell from
// 185–191 to 137–144 MB, and the proxy's CPU per span did not rise (the young collections copy
// less). So tracepipe turns it off when it starts, before any pipeline code has run.

import { setFlagsFromString } from 'node:v8';

/** Turns V8's allocation-site pretenuring off for this process. Safe to call more than once. */
export function stopAllocationSitePretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

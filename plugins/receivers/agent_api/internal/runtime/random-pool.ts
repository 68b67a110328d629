// Random bytes for the ids LangChain and LangSmith draw during a run, from a pool. Their bundled
// `uuid` copies (`@langchain/core`, `langsmith`, and `uuid` itself) take every id's 16 random bytes
// from `crypto.getRandomValues`, a call per id: with a run's callback managers, LangSmith `RunTree`s
// and checkpoints that is some twenty calls per run of the `chat` example graph, each through Node's
// WebCrypto argument checks and a `randomFillSync` into OpenSSL (0.1 ms of CPU per run warm, ~0.6
// ms in a cold server's first seconds: bench/agent/README.md). Node's own `crypto.randomUUID` does
// what this does: it fills a buffer of random bytes once and hands out slices of it, each once.
//
// The pool serves only the calls those libraries make, `crypto.getRandomValues(uint8Array)` of a
// few bytes on the global `crypto`; any other call (another typed array, a larger one, another
// receiver) goes to Node's function unchanged, with its checks and errors. The bytes are the same
// CSPRNG's, never handed out twice, and not kept once handed out.

import { randomFillSync } from 'node:crypto';

/** Bytes filled at once: 256 ids of 16 bytes per OpenSSL call. */
const POOL_BYTES = 4096;
/** Requests up to this size are served from the pool; larger ones by Node directly. */
const MAX_POOLED = 64;

let installed = false;

/**
 * Has `globalThis.crypto.getRandomValues` serve small `Uint8Array` requests from a pool of random
 * bytes. Idempotent; process-wide (the libraries read the global at each call).
 */
export function installRandomPool(): void {
  if (installed) return;
  installed = true;
  const webcrypto = globalThis.crypto;
  const original = webcrypto.getRandomValues;
  const pool = new Uint8Array(POOL_BYTES);
  let offset = POOL_BYTES;
  function getRandomValues(this: unknown, array: unknown): unknown {
    if (this !== webcrypto || !(array instanceof Uint8Array) || array.byteLength > MAX_POOLED)
      return Reflect.apply(original, this, [array]) as unknown;
    const length = array.byteLength;
    if (offset + length > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    for (let index = 0; index < length; index++) {
      array[index] = pool[offset + index]!;
      pool[offset + index] = 0;
    }
    offset += length;
    return array;
  }
  Object.defineProperty(webcrypto, 'getRandomValues', {
    value: getRandomValues,
    writable: true,
    configurable: true,
    enumerable: false,
  });
}

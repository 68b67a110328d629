// `X-Api-Key` checking in constant time: the presented key and every accepted key are hashed to
// equal-length SHA-256 digests and compared with `timingSafeEqual`, all of them every time, so
// neither the position of a mismatch nor which key (if any) matched shows in the response time.

import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** `"a, b"` (one environment variable) or `["a", "b"]` → `["a", "b"]`; blanks dropped. */
export function splitList(value: string | readonly string[] | null | undefined): string[] {
  if (value === null || value === undefined) return [];
  const items = typeof value === 'string' ? value.split(',') : value;
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

export class ApiKeys {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** Whether `presented` is one of the accepted keys. */
  accepts(presented: string | string[] | undefined): boolean {
    if (typeof presented !== 'string' || presented === '') return false;
    const candidate = digest(presented);
    let matched = false;
    for (const accepted of this.digests) matched = timingSafeEqual(candidate, accepted) || matched;
    return matched;
  }
}

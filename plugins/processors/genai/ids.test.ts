// Tests of the remembered id conversion (internal/ids.ts): whatever the sequence of ids, repeated
// or not, valid or not, it gives what converting each one gives.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { idToUuid, RecentUuid } from './internal/ids.ts';

describe('RecentUuid', () => {
  it('converts each id of a sequence as idToUuid does', () => {
    const id = fc.oneof(
      fc.constantFrom('', '0af7651916cd43dd8448eb211c80319c', '00f067aa0ba902b7', '00F067AA0BA902B7', 'xyz'),
      fc.stringMatching(/^[0-9a-f]{16}$|^[0-9a-f]{32}$/),
    );
    fc.assert(
      fc.property(fc.array(id, { maxLength: 12 }), (ids) => {
        const recent = new RecentUuid();
        for (const hex of ids) assert.equal(recent.of(hex), idToUuid(hex));
      }),
      { numRuns: 500 },
    );
  });
});

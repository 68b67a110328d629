// Every coded error is documented in docs/errors.md, and every documented code exists.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ERROR_CODES, TracepipeError } from '../src/errors.ts';

it('docs/errors.md documents exactly the codes in src/errors.ts', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(TP_ERR_[A-Z_]+)` \|/gm)].map((match) => match[1]);
  assert.deepEqual([...documented].sort(), [...ERROR_CODES].sort());
});

it('formats messages from their templates and carries code and status', () => {
  const error = new TracepipeError('TP_ERR_PLUGIN_LOAD', ['./x.ts', 'no such file']);
  assert.equal(error.message, 'cannot load plugin ./x.ts: no such file');
  assert.equal(error.code, 'TP_ERR_PLUGIN_LOAD');
  assert.equal(error.statusCode, 500);
});

// The public API (package.json `exports`) changes only on purpose: the declarations tsc emits for
// the entry points must match the checked-in report, api/tracepipe.api.md.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { REPORT_PATH, renderReport } from '../scripts/api-report.ts';

it('the public API matches api/tracepipe.api.md', () => {
  const expected = readFileSync(REPORT_PATH, 'utf8');
  const actual = renderReport();
  // On failure the diff shows what changed. Intended? Run `npm run api-report` and commit the file.
  assert.equal(actual, expected, 'the public API changed: if on purpose, run `npm run api-report` and review the diff');
});

// Every coded error is documented in docs/errors.md, and every documented code exists: the
// framework's own codes and those the built-in plugins define with `createCodedError`.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { AGENT_API_ERROR_CODES } from '../plugins/receivers/agent_api/errors.ts';
import { CodedError, ERROR_CODES, TracepipeError, createCodedError } from '../src/errors.ts';

it('docs/errors.md documents exactly the codes of the framework and the built-in plugins', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(TP_ERR_[A-Z_]+)` \|/gm)].map((match) => match[1]);
  const defined = new Set<string>([...ERROR_CODES, ...AGENT_API_ERROR_CODES]);
  assert.deepEqual([...documented].sort(), [...defined].sort());
});

it('the framework defines no code only a plugin sends', () => {
  const pluginOnly = AGENT_API_ERROR_CODES.filter((code) => (ERROR_CODES as readonly string[]).includes(code));
  assert.deepEqual(pluginOnly, []);
});

it('formats messages from their templates and carries code and status', () => {
  const error = new TracepipeError('TP_ERR_PLUGIN_LOAD', ['./x.ts', 'no such file']);
  assert.equal(error.message, 'cannot load plugin ./x.ts: no such file');
  assert.equal(error.code, 'TP_ERR_PLUGIN_LOAD');
  assert.equal(error.statusCode, 500);
  assert.ok(error instanceof CodedError);
});

it('createCodedError defines a plugin error with its own code, status and template', () => {
  const Missing = createCodedError('TP_ERR_EXAMPLE_MISSING', 'no %s named %s', 404);
  const cause = new Error('lookup failed');
  const error = new Missing(['thread', 't1'], { cause });
  assert.equal(error.message, 'no thread named t1');
  assert.equal(error.code, 'TP_ERR_EXAMPLE_MISSING');
  assert.equal(error.statusCode, 404);
  assert.equal(error.cause, cause);
  assert.equal(Missing.code, 'TP_ERR_EXAMPLE_MISSING');
  assert.equal(Missing.statusCode, 404);
  assert.ok(error instanceof Missing && error instanceof CodedError && !(error instanceof TracepipeError));
  const Other = createCodedError('TP_ERR_EXAMPLE_OTHER', '%s');
  assert.equal(new Other(['x']).statusCode, 500);
  assert.ok(!(error instanceof Other));
});

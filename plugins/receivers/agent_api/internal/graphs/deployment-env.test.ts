import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDeploymentEnv } from './deployment-env.ts';

describe('applyDeploymentEnv', () => {
  it('sets the variables the process lacks and keeps the ones it has', () => {
    const target: NodeJS.ProcessEnv = { OPENAI_API_KEY: 'from-the-operator' };
    const outcome = applyDeploymentEnv({ OPENAI_API_KEY: 'from-the-file', OPENAI_MODEL: 'gpt-test' }, target);
    assert.deepEqual(target, { OPENAI_API_KEY: 'from-the-operator', OPENAI_MODEL: 'gpt-test' });
    assert.deepEqual(outcome, { applied: ['OPENAI_MODEL'], kept: ['OPENAI_API_KEY'] });
  });

  it('treats an empty value the process has as set', () => {
    const target: NodeJS.ProcessEnv = { DEBUG: '' };
    assert.deepEqual(applyDeploymentEnv({ DEBUG: '1' }, target), { applied: [], kept: ['DEBUG'] });
    assert.equal(target.DEBUG, '');
  });
});

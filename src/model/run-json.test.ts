import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeRun } from '../testkit/runs.ts';
import type { Run } from './runs.ts';
import { attachRunJson, encodedRunJson, runBodyJson, runJson } from './run-json.ts';
import { shareJson } from './shared-json.ts';

describe('runJson', () => {
  it('is the run without inputs and outputs, `extra` last, and the inputs and outputs apart', () => {
    const resource = shareJson({ 'service.name': 'sales-assistant' });
    const run = makeRun({ extra: { metadata: { n: 1 }, resource }, update: true });
    const json = runJson(run);
    const { inputs, outputs, extra, update: _update, ...rest } = run;
    assert.equal(json.main.join(''), JSON.stringify({ ...rest, extra }));
    assert.equal(json.inputs, JSON.stringify(inputs));
    assert.equal(json.outputs, JSON.stringify(outputs));
    assert.equal(json.length, JSON.stringify({ ...rest, inputs, outputs, extra }).length);
  });

  it('leaves out absent inputs, outputs and extra', () => {
    const run: Run = { id: 'a', trace_id: 'a', name: 'n', run_type: 'chain', start_time: 't', inputs: undefined };
    const json = runJson(run);
    assert.deepEqual(json.main, [
      JSON.stringify({ id: 'a', trace_id: 'a', name: 'n', run_type: 'chain', start_time: 't' }),
    ]);
    assert.equal(json.inputs, undefined);
    assert.equal(json.outputs, undefined);
    assert.equal(json.length, JSON.stringify(run).length);
    const onlyInputs = { inputs: { a: 1 } } as unknown as Run;
    assert.equal(runJson(onlyInputs).length, JSON.stringify(onlyInputs).length);
  });

  it('is made from the body texts it is given, so the rest can change in between', () => {
    const run = makeRun();
    const body = runBodyJson(run);
    run.dotted_order = '20231114T221320100000Z' + run.id;
    const json = runJson(run, body);
    assert.equal(JSON.parse(json.main.join('')).dotted_order, run.dotted_order);
    assert.equal(json.inputs, body.inputs);
  });

  it('throws where JSON.stringify would, or when a member has no JSON form', () => {
    assert.throws(() => runBodyJson(makeRun({ outputs: { n: 1n as unknown } })), TypeError);
    assert.throws(
      () => runBodyJson({ ...makeRun(), inputs: (() => {}) as unknown as Record<string, unknown> }),
      TypeError,
    );
  });
});

describe('attached run JSON', () => {
  it('belongs to the very run object it was attached to: copies, clones and JSON do not carry it', () => {
    const run = makeRun();
    const json = runJson(run);
    assert.equal(encodedRunJson(run), undefined);
    attachRunJson(run, json);
    assert.equal(encodedRunJson(run), json);
    // A copy with a change must not be written with the original's text.
    assert.equal(encodedRunJson({ ...run, name: 'renamed' }), undefined);
    assert.equal(encodedRunJson(structuredClone(run)), undefined);
    assert.deepEqual(JSON.parse(JSON.stringify(run)), JSON.parse(JSON.stringify(structuredClone(run))));
    assert.deepEqual(Object.keys(run), Object.keys(structuredClone(run)));
  });
});

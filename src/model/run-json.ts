// A run's JSON text as the upload writes it, made once. The batch processor needs each run's size
// (for its memory bound and to fill upload batches by bytes) and the backend exporter needs its
// text; walking a run to estimate its size and serialising it again in the exporter cost two
// passes over the same data. The batcher now serialises each run instead — its inputs, outputs and
// `extra` when it takes the run, the rest once the run's dotted order is set — sizes it by that
// text, and leaves the text for the exporter (`encodedRunJson`), which copies it into the body.
//
// The text is only valid while the run is unchanged. It is attached to the run object (so it dies
// with the run) only by a component whose output nothing downstream writes to (its
// consumer's `mutatesData` is false: the framework sets it when any later processor of the
// pipeline mutates data, and a fan-out hands mutating consumers a clone, which is a new object
// without text). A run copied or rebuilt downstream is a new object and is serialised afresh.

import type { Run } from './runs.ts';
import { jsonWithShared } from './shared-json.ts';

/** A run's JSON text, split as the backend's multipart body takes it. */
export interface RunJson {
  /**
   * The run without `inputs` and `outputs` (and without `update`), `extra` last, in pieces to be
   * written one after another (joining them would copy the whole text once more).
   */
  readonly main: readonly string[];
  readonly inputs: string | undefined;
  readonly outputs: string | undefined;
  /**
   * Characters of the run's JSON text (what JSON.stringify writes, `update` left out): its UTF-8
   * size for ASCII text, short of it by the extra bytes of other characters.
   */
  readonly length: number;
}

/** The texts of a run's members that only its producer sets: `inputs`, `outputs`, `extra`. */
export interface RunBodyJson {
  readonly inputs: string | undefined;
  readonly outputs: string | undefined;
  readonly extra: string | undefined;
}

// Kept on the run itself under a symbol (JSON.stringify and structuredClone leave symbol-keyed
// members out), with the run it was made for: a copy made with an object spread carries the member
// along, but not for itself. A WeakMap did the same at 3–5 µs more per run in the batch stage
// (bench/pipeline README, 2026-11-27, 12:40).
const RUN_JSON = Symbol('tracepipe.runJson');
interface Attached {
  readonly run: Run;
  readonly json: RunJson;
}
type WithJson = Run & { [RUN_JSON]?: Attached };

/**
 * The JSON texts of a run's `inputs`, `outputs` (absent when null or undefined) and `extra`.
 * Throws where JSON.stringify throws (a bigint, a cycle) or when one of them has no JSON form.
 */
export function runBodyJson(run: Run): RunBodyJson {
  const { inputs, outputs, extra } = run;
  return {
    inputs: inputs == null ? undefined : jsonText(inputs),
    outputs: outputs == null ? undefined : jsonText(outputs),
    // What runs share (the resource's attributes, tool definitions: src/model/shared-json.ts) is
    // copied in as text rather than made again for every run.
    extra: jsonWithShared(extra, EXTRA_DEPTH),
  };
}

/**
 * The whole JSON text of a run, from the texts `runBodyJson` made of it (made now when not given).
 * Throws like `runBodyJson`.
 */
export function runJson(run: Run, body: RunBodyJson = runBodyJson(run)): RunJson {
  const { inputs: _inputs, outputs: _outputs, extra: _extra, update: _update, ...rest } = run;
  const restText = jsonText(rest);
  const main =
    body.extra === undefined
      ? [restText]
      : [restText.slice(0, -1), restText.length > 2 ? ',"extra":' : '"extra":', body.extra, '}'];
  let length = 0;
  for (const piece of main) length += piece.length;
  // As the run's own JSON text: `,"inputs":` and `,"outputs":` too (no comma before the first member).
  if (body.inputs !== undefined) length += body.inputs.length + INPUTS_MEMBER;
  if (body.outputs !== undefined) length += body.outputs.length + OUTPUTS_MEMBER;
  if (length > 2 && main.length === 1 && restText === '{}') length--;
  return { main, inputs: body.inputs, outputs: body.outputs, length };
}

/**
 * Leaves a run's text for whoever writes it out. Only for a run nothing will change any more (see
 * the module comment).
 */
export function attachRunJson(run: Run, json: RunJson): void {
  (run as WithJson)[RUN_JSON] = { run, json };
}

/** The text attached to this very run object, if any. */
export function encodedRunJson(run: Run): RunJson | undefined {
  const attached = (run as WithJson)[RUN_JSON];
  return attached?.run === run ? attached.json : undefined;
}

const INPUTS_MEMBER = ',"inputs":'.length;
const OUTPUTS_MEMBER = ',"outputs":'.length;

/** `extra` → `invocation_params` → `tools`: the deepest shared value the genai processor places. */
const EXTRA_DEPTH = 2;

/** JSON text of a value; throws when it has none (a function or symbol serialises to nothing). */
function jsonText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
  return text;
}

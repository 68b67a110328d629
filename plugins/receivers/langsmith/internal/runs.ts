// Turns what the LangSmith SDKs send — run creates (`post`) and updates (`patch`), as multipart
// parts or JSON — into the pipeline's runs. A create becomes a Run; an update becomes a Run with
// `update: true` carrying only the fields it changes (exporters send it as a patch, the local store
// merges it); a create and an update of the same run in one request become one run. A bad part
// spoils only its own run: it is reported by name, and every other run of the request is kept.

import type { Run, RunType } from 'tracepipe/plugin';
import { RUN_TYPES } from 'tracepipe/plugin';
import { utf8Text } from 'tracepipe/receiverhelper';
import type { Part } from './multipart.ts';

export type Operation = 'post' | 'patch';

/** A part or run that could not be taken, named as the client sent it. */
export interface Problem {
  readonly part: string;
  readonly message: string;
  /** The part is larger than `max_part_bytes`. */
  readonly tooLarge?: boolean;
}

export interface Assembled {
  readonly runs: Run[];
  readonly problems: Problem[];
  /** Parts accepted but not carried by the pipeline (attachments, feedback). */
  readonly ignoredParts: number;
}

const FIELD_PARTS = ['inputs', 'outputs', 'events', 'extra', 'error', 'serialized'] as const;
const RUN_PART = /^(post|patch)\.([^.]+)(?:\.([a-z_]+))?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Pending {
  readonly operation: Operation;
  readonly id: string;
  main?: Record<string, unknown>;
  readonly fields: Record<string, unknown>;
  readonly partNames: string[];
  spoiled: boolean;
}

/** Runs from the parts of a `/runs/multipart` body. */
export function runsFromParts(parts: readonly Part[], maxPartBytes: number, project: string): Assembled {
  const problems: Problem[] = [];
  const pending = new Map<string, Pending>();
  let ignoredParts = 0;
  for (const part of parts) {
    const match = RUN_PART.exec(part.name);
    if (!match) {
      if (/^(attachment|feedback)\./.test(part.name)) {
        ignoredParts++;
        continue;
      }
      problems.push({
        part: part.name,
        message:
          'unknown part name: expected post.<id>, patch.<id>, post.<id>.<field>, attachment.<id>.<name> or feedback.<id>',
      });
      continue;
    }
    // RUN_PART admits only these two operations.
    const operation: Operation = match[1] === 'patch' ? 'patch' : 'post';
    const id = match[2]!;
    const field = match[3];
    const key = `${operation}.${id}`;
    let entry = pending.get(key);
    if (!entry) pending.set(key, (entry = { operation, id, fields: {}, partNames: [], spoiled: false }));
    entry.partNames.push(part.name);
    const refuse = (message: string, tooLarge = false) => {
      problems.push({ part: part.name, message, ...(tooLarge ? { tooLarge } : {}) });
      entry.spoiled = true;
    };
    if (field !== undefined && !(FIELD_PARTS as readonly string[]).includes(field)) {
      refuse(`unknown field "${field}": expected one of ${FIELD_PARTS.join(', ')}`);
      continue;
    }
    if (part.body.length > maxPartBytes) {
      refuse(`part of ${part.body.length} bytes exceeds the ${maxPartBytes}-byte limit`, true);
      continue;
    }
    if (part.contentType !== '' && part.contentType !== 'application/json') {
      refuse(`Content-Type ${part.contentType}: run parts are application/json`);
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(utf8Text(part.body));
    } catch (error) {
      refuse(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (field === undefined) {
      if (!isObject(value)) refuse('a run part is a JSON object');
      else if (entry.main) refuse('appears twice');
      else entry.main = value;
    } else {
      entry.fields[field] = value;
    }
  }
  const runs: Run[] = [];
  for (const entry of pending.values()) {
    if (entry.spoiled) continue;
    if (!entry.main) {
      problems.push({ part: entry.partNames[0]!, message: `no ${entry.operation}.${entry.id} part for this field` });
      continue;
    }
    const made = toRun(entry.operation, { ...entry.main, ...entry.fields, id: entry.main.id ?? entry.id }, project);
    if (typeof made === 'string') problems.push({ part: `${entry.operation}.${entry.id}`, message: made });
    else if (made.id !== entry.id)
      problems.push({ part: `${entry.operation}.${entry.id}`, message: `its id is ${made.id}` });
    else runs.push(made);
  }
  return { runs: mergeUpdates(runs), problems, ignoredParts };
}

/** Runs from `/runs/batch` (`{post: [...], patch: [...]}`), `POST /runs` or `PATCH /runs/{id}`. */
export function runsFromJson(
  items: readonly { operation: Operation; where: string; value: unknown }[],
  project: string,
): Assembled {
  const runs: Run[] = [];
  const problems: Problem[] = [];
  for (const { operation, where, value } of items) {
    const made = isObject(value) ? toRun(operation, value, project) : 'a run is a JSON object';
    if (typeof made === 'string') problems.push({ part: where, message: made });
    else runs.push(made);
  }
  return { runs: mergeUpdates(runs), problems, ignoredParts: 0 };
}

/** A create and an update of one run in one request are one run: the create with the update's fields. */
function mergeUpdates(runs: Run[]): Run[] {
  const creates = new Map(runs.filter((run) => !run.update).map((run) => [run.id, run]));
  const out: Run[] = [];
  for (const run of runs) {
    const create = run.update ? creates.get(run.id) : undefined;
    if (!create) {
      out.push(run);
      continue;
    }
    const { update: _marker, ...fields } = run;
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(create, { [key]: value });
  }
  return out;
}

/** The run a create or update describes, or why it cannot be one. */
function toRun(operation: Operation, raw: Record<string, unknown>, project: string): Run | string {
  const id = raw.id;
  if (typeof id !== 'string' || !UUID.test(id)) return `"id" must be a UUID, got ${JSON.stringify(id)}`;
  const run: Partial<Run> = { id: id.toLowerCase() };
  const problem =
    copyString(raw, run, 'trace_id', UUID) ??
    copyString(raw, run, 'parent_run_id', UUID) ??
    copyString(raw, run, 'dotted_order') ??
    copyString(raw, run, 'name') ??
    copyString(raw, run, 'session_name') ??
    copyString(raw, run, 'session_id') ??
    copyString(raw, run, 'reference_example_id') ??
    copyTime(raw, run, 'start_time') ??
    copyTime(raw, run, 'end_time') ??
    copyObject(raw, run, 'inputs') ??
    copyObject(raw, run, 'outputs') ??
    copyObject(raw, run, 'extra');
  if (problem) return problem;
  if (raw.run_type !== undefined && raw.run_type !== null) {
    if (!(RUN_TYPES as readonly unknown[]).includes(raw.run_type))
      return `"run_type" must be one of ${RUN_TYPES.join(', ')}`;
    run.run_type = raw.run_type as RunType;
  }
  if (raw.error !== undefined && raw.error !== null)
    run.error = typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error);
  if (Array.isArray(raw.tags)) run.tags = raw.tags.filter((tag): tag is string => typeof tag === 'string');
  if (Array.isArray(raw.events)) run.events = raw.events.filter(isObject);
  if (run.error !== undefined) run.status = 'error';
  else if (run.end_time !== undefined) run.status = 'success';
  if (operation === 'patch') return { ...run, update: true } as Run;
  if (run.name === undefined) return '"name" is required';
  if (run.start_time === undefined) return '"start_time" is required';
  run.run_type ??= 'chain';
  run.session_name ??= project;
  // A root's trace id is its own id (the backend's invariant), whatever the SDK left out.
  run.trace_id ??= run.parent_run_id === undefined ? run.id : undefined;
  if (run.trace_id === undefined) return '"trace_id" is required for a run with a parent';
  return run as Run;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function copyString(
  raw: Record<string, unknown>,
  run: Partial<Run>,
  key: keyof Run,
  pattern?: RegExp,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || (pattern && !pattern.test(value)))
    return `"${key}" must be ${pattern ? 'a UUID' : 'a string'}`;
  (run as Record<string, unknown>)[key] = pattern ? value.toLowerCase() : value;
  return undefined;
}

function copyObject(
  raw: Record<string, unknown>,
  run: Partial<Run>,
  key: 'inputs' | 'outputs' | 'extra',
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) return `"${key}" must be a JSON object`;
  run[key] = value;
  return undefined;
}

/**
 * Times as RFC 3339 in UTC: the JS SDK sends epoch milliseconds, the Python SDK ISO 8601 text
 * (with an offset, or naive meaning UTC). Microseconds in the text are kept.
 */
function copyTime(raw: Record<string, unknown>, run: Partial<Run>, key: 'start_time' | 'end_time'): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) {
    run[key] = new Date(value).toISOString();
    return undefined;
  }
  if (typeof value === 'string') {
    const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim());
    if (match) {
      const [, seconds, fraction = '', zone = 'Z'] = match;
      if (zone.toUpperCase() === 'Z' || /^[+-]00:?00$/.test(zone)) {
        run[key] = `${seconds}${fraction}Z`;
        return undefined;
      }
      const parsed = Date.parse(`${seconds}${fraction.slice(0, 4)}${zone}`);
      if (!Number.isNaN(parsed)) {
        run[key] = new Date(parsed).toISOString();
        return undefined;
      }
    }
  }
  return `"${key}" must be a time (epoch milliseconds or ISO 8601), got ${JSON.stringify(value)}`;
}

// The tracing backend's run record, as it flows through a `runs` pipeline and is uploaded.
//
// Field names are the backend's (snake_case JSON keys), so that an exporter can serialise a run as
// it is. Each field's meaning is noted on it below; how spans fill them is in the genai
// processor's README (plugins/processors/genai/README.md).

export const RUN_TYPES = ['tool', 'chain', 'llm', 'retriever', 'embedding', 'prompt', 'parser'] as const;
export type RunType = (typeof RUN_TYPES)[number];

export interface Run {
  /** UUID text. */
  id: string;
  /** UUID text of the trace's root run. */
  trace_id: string;
  name: string;
  run_type: RunType;
  /** RFC 3339, UTC. */
  start_time: string;
  end_time?: string;
  /** UUID text; absent for a root run. */
  parent_run_id?: string;
  /** `<time>Z<id>[.<time>Z<id>...]`: set by the batcher once the parent's order is known. */
  dotted_order?: string;
  status?: 'success' | 'error';
  error?: string;
  /** The backend project name. */
  session_name?: string;
  /** The backend project id. */
  session_id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  tags?: string[];
  events?: Record<string, unknown>[];
  reference_example_id?: string;
  /**
   * Set on an update of a run sent before (the ingest API's `PATCH /runs/{id}` and `patch.<id>`
   * parts, from the `langsmith` receiver): only the fields it has change. Exporters send it as an
   * update (`patch.<id>`), stores merge it into the run they hold. Never set by the span translator.
   */
  update?: true;
}

/** The payload of a `runs` pipeline. */
export interface RunBatch {
  readonly runs: readonly Run[];
  /**
   * What a translator knows about the trace tree beyond the runs themselves, for the batcher that
   * assigns `dotted_order`. Never uploaded: exporters send `runs` only. Absent means no hints.
   */
  readonly hints?: RunTreeHints;
}

/** Tree facts that a span → run translator learns and a batcher needs (see processors/genai). */
export interface RunTreeHints {
  /**
   * Root runs take the trace's UUID as their id, but children that were translated before their
   * root point at the root's own span UUID. Maps that span UUID (alias) to the root run's id.
   */
  readonly rootAliases?: Readonly<Record<string, string>>;
  /**
   * Runs the translator dropped (filtered out), mapped to their own parent run id, or `null` for
   * a dropped root, so that children already waiting on them can be re-parented.
   */
  readonly droppedRuns?: Readonly<Record<string, string | null>>;
}

// The `env` of a langgraph.json is the deployment's environment: graphs and the model clients they
// build read it from `process.env` (`ChatOpenAI` reads `OPENAI_API_KEY`, the example graphs read
// `OPENAI_MODEL`), exactly as under `langgraph dev`, which loads it into its server process. A
// graph cannot be handed its environment any other way, so this one step writes to the process
// environment, and does so conservatively: a variable the process already has always wins (the
// operator's `export` or orchestrator setting beats the file), values are never logged, and the
// step runs once per start, before the graphs are imported.

export interface AppliedEnv {
  /** Names set from the file. */
  readonly applied: string[];
  /** Names the file declares that the process already had: the process's value was kept. */
  readonly kept: string[];
}

/** Sets every variable of `declared` that `target` does not have yet. */
export function applyDeploymentEnv(
  declared: Readonly<Record<string, string>>,
  target: NodeJS.ProcessEnv = process.env,
): AppliedEnv {
  const applied: string[] = [];
  const kept: string[] = [];
  for (const [name, value] of Object.entries(declared)) {
    if (target[name] === undefined) {
      target[name] = value;
      applied.push(name);
    } else {
      kept.push(name);
    }
  }
  return { applied, kept };
}

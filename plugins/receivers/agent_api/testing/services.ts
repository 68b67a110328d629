// The local services the tests use (PostgreSQL, Redis). Outside CI a suite whose service is
// missing skips itself, so that the tests run on a machine without them; a CI run (.ci/run starts
// both services and marks its processes with TRACEPIPE_CI_RUN) must not lose those suites quietly.

/** Throws when `service` did not answer in a CI run; elsewhere returns, and the caller skips. */
export function requireServiceUnderCi(service: string, uri: string, cause: unknown): void {
  if (!process.env.TRACEPIPE_CI_RUN) return;
  const reason = cause instanceof Error ? cause.message : String(cause);
  throw new Error(`${service} at ${uri} did not answer in a CI run, which starts it: ${reason}`, { cause });
}

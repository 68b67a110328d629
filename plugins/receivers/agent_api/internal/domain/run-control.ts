// The domain's view of the run machinery (`../runs/`): what it may ask of the runs it creates,
// cancels and waits for. Declared here, where it is used, so that the domain imports nothing from
// the run machinery; the composition root hands it the `RunCoordinator`.

/**
 * What the run machinery (worker pool, event logs) offers the domain to signal, stop and await runs.
 * Declared here, where it is used; `RunCoordinator` provides it without importing the domain.
 */
export interface RunControl {
  /** A new pending run exists: wake an idle worker. */
  notify(): void;
  /**
   * Opens the run's event log with its `metadata` event, so that a stream gets that at once and
   * may wait on the rest before the run starts; with `threadId`, a new run that the thread's
   * streams are told of.
   */
  open(runId: string, threadId?: string): void;
  /** Stops a running run (on whichever instance executes it); false when no worker holds it. */
  abort(runId: string, action: 'interrupt' | 'rollback'): boolean | Promise<boolean>;
  /** Resolves once the run has finished (or at once when it has). */
  waitFor(runId: string, signal?: AbortSignal): Promise<void>;
  /** Closes the run's event log after it ended without executing (cancelled while pending). */
  close(runId: string): void;
  /** Forgets a deleted run's event log. */
  discard(runId: string): void;
}

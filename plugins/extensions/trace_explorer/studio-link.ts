// A capability the trace explorer defines for the components whose runs it shows: a component with
// a studio (the agent server's web UI) finds the explorer through `Host.getExtensions()` and tells
// it where that studio is, so that a run's trace links back to its thread there. The framework
// knows nothing of studios; plugins import no other plugin, so the contract is this method's name
// and signature, which a component calls on any extension that has it.

/** An extension that links traces to the studio a run came from. */
export interface StudioLinkTarget {
  /**
   * Where the studio is (`http://<host>:<port><ui.path>/`; a trace links to
   * `#/studio/<assistant>/<thread>` under it), or `undefined` once it is gone. Called once the
   * studio listens, and again with `undefined` when it stops.
   */
  linkStudio(studioUrl: string | undefined): void;
}

/** Whether an extension takes studio links. */
export function isStudioLinkTarget(extension: unknown): extension is StudioLinkTarget {
  return typeof (extension as Partial<StudioLinkTarget> | null)?.linkStudio === 'function';
}

// Where `new Client()` of `@langchain/langgraph-sdk`, created without an `apiUrl` inside this
// server (a graph calling another graph, a route of the deployment's `http.app`), sends its
// requests: the SDK reads `globalThis[Symbol.for("langgraph_api:url")]` for its default URL, which
// the LangGraph platform sets to the server itself. Here it is this server's own listener, so such
// calls pass the same authentication and guards as any other client's.

const LOOPBACK_URL = Symbol.for('langgraph_api:url');

/** Sets the default SDK URL to `url` unless another server in this process did; returns the undo. */
export function bindLoopbackUrl(url: string): () => void {
  const slot = globalThis as Record<symbol, unknown>;
  if (LOOPBACK_URL in slot) return () => undefined;
  slot[LOOPBACK_URL] = url;
  return () => {
    if (slot[LOOPBACK_URL] === url) delete slot[LOOPBACK_URL];
  };
}

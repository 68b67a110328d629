// The errors of graph loading and lookup, classified by type so that the API layer can map them to
// statuses (an unknown graph is a 404; a graph that fails to load stops the server from starting).

/** Why a graph could not be loaded; part of the error so callers never match on message text. */
export type GraphLoadFailure =
  | 'invalid_spec' // the "path:export" string or the langgraph.json file is malformed
  | 'config_missing' // the langgraph.json file does not exist or cannot be read
  | 'file_missing' // the graph's module file does not exist
  | 'import_failed' // the module threw while being imported (syntax error, missing dependency, ...)
  | 'export_missing' // the module has no such export
  | 'not_a_graph' // the export is neither a compiled graph, a StateGraph nor a factory
  | 'factory_failed'; // a graph factory threw or returned something that is not a graph

/** A graph named in the deployment's configuration could not be loaded. */
export class GraphLoadError extends Error {
  override readonly name = 'GraphLoadError';
  constructor(
    readonly failure: GraphLoadFailure,
    readonly graphId: string | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A graph id that the deployment does not define (the API answers 404). */
export class GraphNotFoundError extends Error {
  override readonly name = 'GraphNotFoundError';
  readonly statusCode = 404;
  constructor(readonly graphId: string) {
    super(`Graph "${graphId}" not found`);
  }
}

// The errors the graph library throws when a request, not the server, is at fault (an unknown
// checkpoint namespace, an update as a node the graph lacks, an empty input), classified once so
// that the API's error handler answers each with a 4xx and its message on every route.
//
// LangGraph.js types some of these (`InvalidUpdateError`, `EmptyInputError`) and throws the rest
// as plain `Error`s; those are recognised here by their message, the one place the agent API
// matches error text. graph-input-errors.test.ts drives each through the installed library, so a
// changed wording fails a test instead of quietly turning back into a 500.

import { EmptyInputError, InvalidUpdateError } from '@langchain/langgraph';
import { ApiInvalidError, ApiNotFoundError } from '../../errors.ts';

/** How the API answers a graph-library error caused by the request. */
export interface GraphInputError {
  statusCode: 404 | 422;
  code: typeof ApiNotFoundError.code | typeof ApiInvalidError.code;
  message: string;
}

/** Plain `Error`s the library throws for bad input, by the start of their message. */
const UNTYPED_INPUT_ERRORS: readonly { pattern: RegExp; statusCode: 404 | 422 }[] = [
  // updateState/bulkUpdateState on a checkpoint namespace that names no subgraph.
  { pattern: /^Subgraph "[^]*" not found$/, statusCode: 404 },
  // bulkUpdateState with an empty superstep list or a superstep without updates.
  { pattern: /^No (supersteps|updates) provided$/, statusCode: 422 },
];

/** The first line: LangGraph appends a troubleshooting URL to its typed errors' messages. */
function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/** The answer for `error` when the graph library threw it over bad input, else undefined. */
export function classifyGraphInputError(error: unknown): GraphInputError | undefined {
  if (error instanceof InvalidUpdateError || error instanceof EmptyInputError)
    return { statusCode: 422, code: ApiInvalidError.code, message: firstLine(error.message) };
  if (!(error instanceof Error) || error.constructor !== Error) return undefined;
  const known = UNTYPED_INPUT_ERRORS.find(({ pattern }) => pattern.test(error.message));
  if (!known) return undefined;
  return {
    statusCode: known.statusCode,
    code: known.statusCode === 404 ? ApiNotFoundError.code : ApiInvalidError.code,
    message: error.message,
  };
}

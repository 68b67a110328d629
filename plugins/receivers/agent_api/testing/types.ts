// The shapes tests read from the server where the SDK types them loosely (`unknown` values,
// `DefaultValues`), so that tests need neither `any` nor double casts.

import type { Message } from '@langchain/langgraph-sdk';

/** The values of a graph with a `messages` channel (every example graph), as wait and join answer them. */
export interface MessagesValues {
  messages: Message[];
}

/** What wait and join answer for a run that failed. */
export interface RunFailure {
  __error__: { error: string; message: string };
}

/** The JSON body of an error answer. */
export interface ErrorBody {
  message: string;
  code?: string;
  statusCode?: number;
}

// @ts-check
// The shapes of the API objects the interface reads, as JSDoc types: the records of the Agent
// Deployment API (only the fields the screens use; the server sends more) and the state the screens
// build from them. Type-only: this module exports no values. The decoder tests import these types
// too (`ui-decoders.test.ts`), so the interface and its tests share one definition.

/** @typedef {Record<string, unknown>} JsonObject A JSON object (context, metadata, values). */

/**
 * An assistant, as `GET /assistants/{id}` and `POST /assistants/search` answer it: its active
 * version.
 * @typedef {object} Assistant
 * @property {string} assistant_id
 * @property {string} graph_id
 * @property {string} name
 * @property {string | null} [description]
 * @property {number} version
 * @property {JsonObject} [context]
 * @property {JsonObject} [config]
 * @property {JsonObject & { created_by?: string }} [metadata] `created_by: 'system'` for a
 *   graph's system assistant.
 * @property {string} [created_at]
 * @property {string} [updated_at]
 */

/**
 * One version of an assistant (`POST /assistants/{id}/versions`).
 * @typedef {object} AssistantVersion
 * @property {string} assistant_id
 * @property {number} version
 * @property {string} name
 * @property {JsonObject} [context]
 * @property {JsonObject} [metadata]
 * @property {string} [created_at]
 */

/**
 * The body of `POST /assistants` and `PATCH /assistants/{id}` as the form sends it; `graph_id`
 * only on creation.
 * @typedef {object} AssistantBody
 * @property {string} name
 * @property {string | null} description
 * @property {JsonObject | undefined} context
 * @property {JsonObject | undefined} metadata
 * @property {string} [graph_id]
 */

/**
 * The query of `POST /assistants/search`.
 * @typedef {object} AssistantQuery
 * @property {number} [limit]
 * @property {string} [name]
 * @property {string} [graph_id]
 * @property {JsonObject} [metadata]
 * @property {string} [sort_by]
 * @property {'asc' | 'desc'} [sort_order]
 */

/**
 * A JSON Schema, as far as the forms read one: the properties of a graph's context.
 * @typedef {object} JsonSchema
 * @property {string} [type] (A list of types in some schemas: read it as unknown.)
 * @property {string} [description]
 * @property {string} [title]
 * @property {unknown} [default]
 * @property {unknown[]} [enum]
 * @property {Record<string, JsonSchema>} [properties]
 * @property {string[]} [required]
 * @property {JsonSchema[]} [anyOf]
 */

/**
 * `GET /assistants/{id}/schemas`: `context_schema` (newer graphs) or `config_schema`.
 * @typedef {object} AssistantSchemas
 * @property {JsonSchema | null} [context_schema]
 * @property {JsonSchema | null} [config_schema]
 */

/**
 * `GET /info`; `graphs` only when the server lists them.
 * @typedef {object} ServerInfo
 * @property {string} [version]
 * @property {string} [langgraph_js_version]
 * @property {ServerFlags} [flags]
 * @property {string[]} [graphs]
 */

/**
 * The features `GET /info` reports as on or off.
 * @typedef {object} ServerFlags
 * @property {boolean} [assistants]
 * @property {boolean} [crons] Whether the server runs crons.
 * @property {boolean} [mcp] Whether `/mcp` answers.
 * @property {boolean} [a2a] Whether `/a2a/{assistant_id}` answers.
 */

/**
 * A cron: scheduled runs of an assistant (`POST /runs/crons`, `POST /runs/crons/search`).
 * @typedef {object} Cron
 * @property {string} cron_id
 * @property {string} assistant_id
 * @property {string | null} thread_id The thread every run goes to; null: a new thread each run.
 * @property {'delete' | 'keep' | null} [on_run_completed] Threadless crons: whether each run's
 *   thread is deleted when it ends.
 * @property {string} schedule A 5-field cron expression.
 * @property {string | null} [timezone] The zone the schedule is read in; null: UTC.
 * @property {string | null} [end_time]
 * @property {string | null} next_run_date When the next run is due; null when none is.
 * @property {boolean} enabled
 * @property {JsonObject} [metadata]
 * @property {string} [created_at]
 * @property {string} [updated_at]
 */

/**
 * The body of `POST /runs/crons` as the Crons screen sends it.
 * @typedef {object} CronBody
 * @property {string} assistant_id
 * @property {string} schedule
 * @property {'delete' | 'keep'} on_run_completed
 * @property {JsonObject} [input]
 */

/**
 * The page's own settings (`<ui path>/config.json`).
 * @typedef {object} PageConfig
 * @property {string | null} trace_explorer_url The trace list of the trace explorer; runs link
 *   to `<url>/<trace_id>?run=<run_id>`. Null: no links.
 */

/**
 * A graph's drawing (`GET /assistants/{id}/graph`).
 * @typedef {object} GraphDrawing
 * @property {{ id: string, type?: string, data?: unknown, metadata?: JsonObject | null }[]} nodes
 * @property {{ source: string, target: string, conditional?: boolean, data?: unknown }[]} edges
 */

/**
 * A pending interrupt (`tasks[].interrupts[]` of a thread state, `__interrupt__` of a stream).
 * @typedef {object} Interrupt
 * @property {string} [id]
 * @property {unknown} value
 */

/**
 * A task of a thread state: a node that runs next, with the interrupts it raised.
 * @typedef {object} StateTask
 * @property {string} id
 * @property {string} name
 * @property {string | null} [error] Set when the task failed: the thread's run ended in an error.
 * @property {Interrupt[]} [interrupts]
 */

/**
 * The body of `POST /threads/{id}/state` (update_state).
 * @typedef {object} StateUpdate
 * @property {unknown} values
 * @property {string} [as_node]
 * @property {string} [checkpoint_id]
 */

/**
 * A thread (`POST /threads`, `POST /threads/search`).
 * @typedef {object} Thread
 * @property {string} thread_id
 * @property {string} status `idle`, `busy`, `interrupted` or `error`.
 * @property {(JsonObject & { messages?: Message[] }) | null} [values] The current state's values.
 * @property {string} [created_at]
 * @property {string} [updated_at]
 * @property {JsonObject & { graph_id?: string }} [metadata] `graph_id`: the graph that last ran
 *   on the thread.
 */

/**
 * The query of `POST /threads/search`.
 * @typedef {object} ThreadQuery
 * @property {number} [limit]
 * @property {JsonObject} [metadata]
 * @property {string} [sort_by]
 * @property {'asc' | 'desc'} [sort_order]
 */

/**
 * A thread's state (`GET /threads/{id}/state`), or one checkpoint of its history
 * (`POST /threads/{id}/history`, newest first).
 * @typedef {object} ThreadState
 * @property {JsonObject & { messages?: Message[] }} [values]
 * @property {string[]} [next] The nodes that run next (empty when the graph is done).
 * @property {(JsonObject & { checkpoint_id?: string }) | null} [checkpoint]
 * @property {(JsonObject & { step?: number, source?: string, writes?: JsonObject | null, run_id?: string }) | null} [metadata]
 * @property {StateTask[]} [tasks]
 * @property {string} [checkpoint_id]
 * @property {string | null} [parent_checkpoint_id]
 * @property {string} [created_at]
 */

/**
 * A run (`GET /threads/{thread_id}/runs/{run_id}`, `GET /threads/{thread_id}/runs`).
 * @typedef {object} Run
 * @property {string} run_id
 * @property {string} thread_id
 * @property {string} [assistant_id]
 * @property {string} status `pending`, `running`, `error`, `success`, `timeout` or `interrupted`.
 * @property {string} [created_at]
 * @property {string} [updated_at]
 * @property {{ input?: unknown, command?: { resume?: unknown } | null, config?: JsonObject } & JsonObject} [kwargs]
 */

/**
 * The body of `POST /threads/{id}/runs/stream` as the studio sends it: new input, or a
 * `command` resuming an interrupt, or neither (continue from a breakpoint); `checkpoint_id` forks
 * the thread from that checkpoint.
 * @typedef {object} RunStreamBody
 * @property {string} assistant_id
 * @property {JsonObject | null} [input]
 * @property {{ resume: unknown }} [command]
 * @property {string[]} stream_mode
 * @property {string} [checkpoint_id]
 * @property {JsonObject} [context]
 * @property {string[]} [interrupt_before]
 * @property {string[]} [interrupt_after]
 */

/**
 * A message: in a thread's state (`type` human/ai/tool, string or block content), as a streamed
 * `messages` chunk (`type` AIMessageChunk, …), or as sent (`role` user).
 * @typedef {object} Message
 * @property {string} [id]
 * @property {string} [type]
 * @property {string} [role]
 * @property {unknown} [content] A string, or an array of content blocks.
 * @property {ToolCall[]} [tool_calls] An AI message's tool calls.
 * @property {{ id?: string, name?: string, args?: string, index?: number }[]} [tool_call_chunks]
 * @property {string} [tool_call_id] A tool message's call.
 * @property {string | null} [name] A tool message's tool.
 * @property {string} [status] A tool message's outcome (`success`, `error`).
 */

/**
 * A tool call of an AI message (`tool_calls[]`), or one assembled from streamed
 * `tool_call_chunks` (whose `args` arrive as JSON text).
 * @typedef {object} ToolCall
 * @property {string} [id]
 * @property {string} name
 * @property {unknown} args
 */

/**
 * A message the studio assembled from streamed chunks (see messages.js).
 * @typedef {object} StreamedMessage
 * @property {string} id
 * @property {'ai' | 'tool'} type
 * @property {string} content
 * @property {ToolCall[]} [tool_calls]
 * @property {string} [tool_call_id]
 * @property {string} [name]
 */

/**
 * One server-sent event as the parser reads it: `data` is the text of its `data` lines.
 * @typedef {object} SseEvent
 * @property {string} event The event name; `message` when the frame names none.
 * @property {string} data
 * @property {string | undefined} id The last id seen on the stream, as EventSource keeps it.
 */

/**
 * One server-sent event with its data parsed as JSON (the text itself when it is not JSON).
 * @typedef {object} StreamEvent
 * @property {string} event
 * @property {unknown} data
 * @property {string | undefined} id
 */

/**
 * The studio's view of the current run, built from the stream and read back when it ends.
 * @typedef {object} RunView
 * @property {string} [id] The run id, once the stream's `metadata` names it.
 * @property {string} [status] `pending` until the stream starts, then the run's status.
 * @property {string} [input] What started it: the message, "resume: …", "fork from step n", …
 * @property {number} [chunks] Message chunks streamed so far.
 * @property {string} [error]
 * @property {string} [node] The node that reported last (updates stream).
 */

/**
 * A stream event of a mode the studio does not fold into the conversation (`debug`, `tasks`,
 * `checkpoints`, `custom`, `events`), listed for debugging.
 * @typedef {object} OtherEvent
 * @property {string} event
 * @property {unknown} data
 */

/**
 * One node's update from the `updates` stream mode.
 * @typedef {object} NodeUpdate
 * @property {string} node
 * @property {unknown} value
 */

/**
 * Shows a message in the shell's live region; `carry` keeps it across the navigation it
 * announces.
 * @callback Announce
 * @param {string} message
 * @param {{ carry?: boolean }} [options]
 * @returns {void}
 */

export {};

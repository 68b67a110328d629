// The span shapes of the pipeline benchmarks' workloads (workload.ts): one trace each, as the
// instrumentation it stands for sends it, with the same conversation — a system prompt, an earlier
// turn, a question, a tool call that searches reports and an answer — so that what differs from one
// shape to the next is the convention, not the text. Children come before their root, as an SDK's
// batch span processor exports them (it exports a span when it ends).

import type { AnyValue, Attribute, Span, SpanEvent } from '../../src/model/spans.ts';
import { intAttr as int, stringAttr as str } from '../../src/testkit/spans.ts';

/** Makes one span of the trace being built: its parent is the root ('' for the root itself). */
export type SpanMaker = (
  name: string,
  parent: 'root' | '',
  kind: number,
  attributes: Attribute[],
  offset: bigint,
  events?: SpanEvent[],
) => Span;

/** What varies from trace to trace: the request's sequence number and the span's index in it. */
export interface TraceSeed {
  readonly sequence: number;
  readonly index: number;
  /** Fresh text of a few characters (response and tool call ids). */
  readonly token: () => string;
}

export interface Shape {
  /** One line for the README and `--payload` help. */
  readonly description: string;
  readonly trace: (span: SpanMaker, seed: TraceSeed) => Span[];
  readonly resource: (sequence: number) => Attribute[];
}

export const SYSTEM_PROMPT =
  'You are a financial analysis assistant for the sales organisation. Answer with short, factual ' +
  'bullet points. Use the search_reports tool to look up quarterly figures before you answer, cite ' +
  'the report you used, and never invent numbers. If the question is ambiguous, state the ' +
  'assumption you made. Amounts are in euros unless the report says otherwise; round percentages ' +
  'to whole numbers.';

export const PREVIOUS_QUESTION = 'Which region closed the most new business last quarter?';

export const PREVIOUS_ANSWER =
  'The Nordics closed the most new business in Q2: 1.1 M€ across 14 deals, ahead of DACH (0.9 M€, ' +
  '11 deals) and Benelux (0.6 M€, 9 deals). Most of it came from two enterprise expansions signed in ' +
  'the last week of June (Q2-2026-sales.pdf, p. 5).';

const TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    quarter: { type: 'string', enum: ['Q1', 'Q2', 'Q3', 'Q4'] },
    year: { type: 'integer' },
    sections: { type: 'array', items: { type: 'string' } },
  },
  required: ['quarter', 'year'],
};
const TOOL_DESCRIPTION =
  'Searches the quarterly sales and pipeline reports; returns matching passages with their page.';
export const TOOL_DEFINITIONS = JSON.stringify([
  { type: 'function', name: 'search_reports', description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS },
]);
export const TOOL_ARGUMENTS = '{"quarter":"Q3","year":2026,"sections":["revenue","churn","pipeline"]}';

export const question = (seed: TraceSeed) =>
  `Request ${seed.sequence}-${seed.index}: summarise the quarterly report for the sales team in three bullet ` +
  'points, and compare revenue, churn and pipeline with the previous quarter.';

export const toolResult = (seed: TraceSeed) =>
  JSON.stringify({
    hits: [
      { report: 'Q3-2026-sales.pdf', page: 4, text: 'Revenue 4.2 M€ (+12% q/q), driven by enterprise renewals.' },
      { report: 'Q3-2026-sales.pdf', page: 7, text: 'Gross churn 3% (Q2: 5%); two mid-market losses.' },
      { report: 'Q3-2026-pipeline.xlsx', page: 1, text: `Qualified pipeline ${seed.sequence % 97} deals, 9.8 M€.` },
    ],
  });

export const finalAnswer = (seed: TraceSeed) =>
  '- Revenue grew 12% to 4.2 M€, driven by enterprise renewals (Q3-2026-sales.pdf, p. 4).\n' +
  '- Churn fell from 5% to 3%; the two losses were mid-market accounts (p. 7).\n' +
  `- The qualified pipeline holds ${seed.sequence % 97} deals worth 9.8 M€ (Q3-2026-pipeline.xlsx).`;

export const SHORT_ANSWER = 'Revenue +12% (4.2 M€), churn down to 3%, pipeline 9.8 M€.';

/** The conversation of the first model call, OpenAI-style. */
export const conversation = (seed: TraceSeed) => [
  { role: 'system', content: SYSTEM_PROMPT },
  { role: 'user', content: PREVIOUS_QUESTION },
  { role: 'assistant', content: PREVIOUS_ANSWER },
  { role: 'user', content: question(seed) },
];

export const double = (key: string, value: number): Attribute => ({ key, value: { type: 'double', value } });
const strings = (key: string, values: string[]): Attribute => ({
  key,
  value: { type: 'array', value: values.map((value) => ({ type: 'string', value })) },
});
const kvlist = (entries: Record<string, string>): AnyValue => ({
  type: 'kvlist',
  value: Object.entries(entries).map(([key, value]) => ({ key, value: { type: 'string', value } })),
});
const event = (name: string, offset: bigint, attributes: Attribute[]): SpanEvent => ({
  timeUnixNano: offset,
  name,
  attributes,
  droppedAttributesCount: 0,
});

/** What one span of an agent turn carries in a given convention; its place in the trace is `agentTurn`'s. */
export interface SpanParts {
  readonly name: string;
  readonly kind: number;
  readonly attributes: Attribute[];
  readonly events?: SpanEvent[];
}

/**
 * The agent turn of every conversational shape, children before their root as a batch span
 * processor exports them: a model call that asks for the tool (1 ms into the trace), the tool's run
 * (2 ms), the model call that answers (3 ms), and the agent's root span around them.
 */
export function agentTurn(
  span: SpanMaker,
  turn: {
    readonly askTool: SpanParts;
    readonly tool: SpanParts;
    readonly answer: SpanParts;
    readonly agent: SpanParts;
  },
): Span[] {
  const child = (parts: SpanParts, offset: bigint) =>
    span(parts.name, 'root', parts.kind, parts.attributes, offset, parts.events);
  const { agent } = turn;
  return [
    child(turn.askTool, 1_000_000n),
    child(turn.tool, 2_000_000n),
    child(turn.answer, 3_000_000n),
    span(agent.name, '', agent.kind, agent.attributes, 0n, agent.events),
  ];
}

/** The seven resource attributes of a production service. */
export const serviceResource = (language: string, sdk: string) => (sequence: number) => [
  str('service.name', 'sales-assistant'),
  str('service.version', '2.14.1'),
  str('deployment.environment.name', 'production'),
  str('telemetry.sdk.language', language),
  str('telemetry.sdk.name', sdk),
  str('telemetry.sdk.version', '1.38.0'),
  str('host.name', `worker-${sequence % 8}`),
];

const OPENAI_CALL = [
  str('gen_ai.system', 'openai'),
  str('gen_ai.operation.name', 'chat'),
  str('gen_ai.request.model', 'gpt-4o-mini'),
];

/**
 * What the figures before 2026-11-26 measured: OTel GenAI attributes whose prompt and completion are
 * JSON lists of messages, OpenInference kinds and `input.value` / `output.value` on the tool and
 * the root, about 1.4 KB per span on the wire.
 */
const realistic: Shape = {
  description: 'the default: gen_ai.* with JSON-list gen_ai.prompt / gen_ai.completion, OpenInference tool and agent',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const llm = (messages: object[], answer: string, finish: string): SpanParts => ({
      name: 'chat gpt-4o-mini',
      kind: 3,
      attributes: [
        ...OPENAI_CALL,
        str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
        str('gen_ai.response.id', `chatcmpl-${seed.token()}`),
        str('gen_ai.response.finish_reasons', finish),
        double('gen_ai.request.temperature', 0.2),
        int('gen_ai.request.max_tokens', 512n),
        str('gen_ai.tool.definitions', TOOL_DEFINITIONS),
        str('gen_ai.prompt', JSON.stringify(messages)),
        str('gen_ai.completion', JSON.stringify([{ role: 'assistant', content: answer }])),
        str('server.address', 'api.openai.com'),
        int('server.port', 443n),
        int('gen_ai.usage.input_tokens', 412n),
        int('gen_ai.usage.output_tokens', 96n),
      ],
    });
    const history = conversation(seed);
    const hits = toolResult(seed);
    return agentTurn(span, {
      askTool: llm(history, 'Calling search_reports({"quarter":"Q3","year":2026}).', 'tool_calls'),
      tool: {
        name: 'search_reports',
        kind: 1,
        attributes: [
          str('openinference.span.kind', 'TOOL'),
          str('tool.name', 'search_reports'),
          str('input.value', TOOL_ARGUMENTS),
          str('output.value', hits),
        ],
      },
      answer: llm([...history, { role: 'tool', content: hits }], finalAnswer(seed), 'stop'),
      agent: {
        name: 'agent',
        kind: 2,
        attributes: [
          str('openinference.span.kind', 'AGENT'),
          str('input.value', question(seed)),
          str('output.value', SHORT_ANSWER),
          str('session.id', `session-${seed.sequence % 1000}`),
          str('user.id', `user-${seed.sequence % 50}`),
        ],
      },
    });
  },
};

/** About 390 bytes per span, the root first: the workload of the figures before 2026-11-24. */
const small: Shape = {
  description: 'about 390 bytes per span, the root first (the figures before 2026-11-24)',
  resource: () => [str('service.name', 'bench-app')],
  trace(span, seed) {
    const question = `Request ${seed.sequence}-${seed.index}: summarise the quarterly report for the sales team in three bullet points.`;
    const llm = (offset: bigint) =>
      span(
        'chat gpt-4o-mini',
        'root',
        1,
        [
          ...OPENAI_CALL,
          str(
            'gen_ai.prompt',
            JSON.stringify([
              { role: 'system', content: 'You are a helpful assistant.' },
              { role: 'user', content: question },
            ]),
          ),
          str(
            'gen_ai.completion',
            JSON.stringify([
              {
                role: 'assistant',
                content: `- Revenue grew 12%.\n- Churn fell to 3%.\n- Pipeline is ${seed.sequence % 97} deals.`,
              },
            ]),
          ),
          int('gen_ai.usage.input_tokens', 42n),
          int('gen_ai.usage.output_tokens', 31n),
        ],
        offset,
      );
    return [
      span('agent', '', 1, [str('openinference.span.kind', 'AGENT'), str('input.value', question)], 0n),
      llm(1_000_000n),
      span(
        'search_reports',
        'root',
        1,
        [
          str('openinference.span.kind', 'TOOL'),
          str('tool.name', 'search_reports'),
          str('input.value', '{"quarter":"Q3"}'),
          str('output.value', '{"hits":3}'),
        ],
        2_000_000n,
      ),
      llm(3_000_000n),
    ];
  },
};

/** A run's metadata as LangSmith's SDKs write it: `langsmith.metadata.*`. */
const langsmithMetadata = (seed: TraceSeed) => [
  str('langsmith.metadata.thread_id', `thread-${seed.sequence % 1000}`),
  str('langsmith.metadata.user_id', `user-${seed.sequence % 50}`),
  str('langsmith.metadata.revision_id', 'v2.14.1-3-gabc1234'),
];

/**
 * LangSmith's own attributes, as its SDKs' OpenTelemetry exporters write them: the run type in
 * `langsmith.span.kind`, metadata as `langsmith.metadata.*`, inputs and outputs as JSON objects in
 * `input.value` / `output.value` (the model call's as `{messages}` and the provider's answer).
 */
const langsmith: Shape = {
  description: 'LangSmith attributes: langsmith.span.kind, langsmith.metadata.*, JSON input.value / output.value',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const metadata = langsmithMetadata(seed);
    const llm = (messages: object[], answer: object): SpanParts => ({
      name: 'ChatOpenAI',
      kind: 1,
      attributes: [
        str('langsmith.span.kind', 'llm'),
        str('gen_ai.system', 'openai'),
        str('gen_ai.request.model', 'gpt-4o-mini'),
        ...metadata,
        str('langsmith.metadata.ls_temperature', '0.2'),
        str('input.value', JSON.stringify({ messages })),
        str('output.value', JSON.stringify(answer)),
        int('gen_ai.usage.input_tokens', 412n),
        int('gen_ai.usage.output_tokens', 96n),
      ],
    });
    const history = conversation(seed);
    return agentTurn(span, {
      askTool: llm(history, {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: `call_${seed.token()}`, name: 'search_reports', args: JSON.parse(TOOL_ARGUMENTS) }],
      }),
      tool: {
        name: 'search_reports',
        kind: 1,
        attributes: [
          str('langsmith.span.kind', 'tool'),
          ...metadata,
          str('input.value', TOOL_ARGUMENTS),
          str('output.value', JSON.stringify({ output: toolResult(seed) })),
        ],
      },
      answer: llm([...history, { role: 'tool', content: toolResult(seed) }], {
        role: 'assistant',
        content: finalAnswer(seed),
      }),
      agent: {
        name: 'sales_agent',
        kind: 1,
        attributes: [
          str('langsmith.span.kind', 'chain'),
          str('langsmith.trace.name', 'sales_agent'),
          str('langsmith.span.tags', 'production,sales'),
          ...metadata,
          str('input.value', JSON.stringify({ question: question(seed) })),
          str('output.value', JSON.stringify({ answer: SHORT_ANSWER })),
        ],
      },
    });
  },
};

/**
 * OpenInference (Arize Phoenix's instrumentations): indexed `llm.input_messages.N.message.*` and
 * `llm.output_messages.N.message.*`, the span kind in `openinference.span.kind`, the request and
 * response also whole as JSON in `input.value` / `output.value`.
 */
const openinference: Shape = {
  description: 'OpenInference: llm.input_messages.N.message.*, llm.output_messages.N.*, openinference.span.kind',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const llm = (history: { role: string; content: string }[], output: Attribute[]): SpanParts => ({
      name: 'ChatCompletion',
      kind: 1,
      attributes: [
        str('openinference.span.kind', 'LLM'),
        str('llm.system', 'openai'),
        str('llm.provider', 'openai'),
        str('llm.model_name', 'gpt-4o-mini-2024-07-18'),
        str('llm.invocation_parameters', '{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":512}'),
        str('llm.tools.0.tool.json_schema', JSON.stringify({ type: 'function', function: TOOL_PARAMETERS })),
        ...history.flatMap((message, n) => [
          str(`llm.input_messages.${n}.message.role`, message.role),
          str(`llm.input_messages.${n}.message.content`, message.content),
        ]),
        ...output,
        int('llm.token_count.prompt', 412n),
        int('llm.token_count.completion', 96n),
        int('llm.token_count.total', 508n),
        str('session.id', `session-${seed.sequence % 1000}`),
      ],
    });
    const history = conversation(seed);
    const callId = `call_${seed.token()}`;
    return agentTurn(span, {
      askTool: llm(history, [
        str('llm.output_messages.0.message.role', 'assistant'),
        str('llm.output_messages.0.message.tool_calls.0.tool_call.id', callId),
        str('llm.output_messages.0.message.tool_calls.0.tool_call.function.name', 'search_reports'),
        str('llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments', TOOL_ARGUMENTS),
      ]),
      tool: {
        name: 'search_reports',
        kind: 1,
        attributes: [
          str('openinference.span.kind', 'TOOL'),
          str('tool.name', 'search_reports'),
          str('tool.description', TOOL_DESCRIPTION),
          str('input.value', TOOL_ARGUMENTS),
          str('input.mime_type', 'application/json'),
          str('output.value', toolResult(seed)),
          str('output.mime_type', 'application/json'),
          str('session.id', `session-${seed.sequence % 1000}`),
        ],
      },
      answer: llm(
        [...history, { role: 'tool', content: toolResult(seed) }],
        [
          str('llm.output_messages.0.message.role', 'assistant'),
          str('llm.output_messages.0.message.content', finalAnswer(seed)),
        ],
      ),
      agent: {
        name: 'agent',
        kind: 1,
        attributes: [
          str('openinference.span.kind', 'AGENT'),
          str('input.value', question(seed)),
          str('input.mime_type', 'text/plain'),
          str('output.value', SHORT_ANSWER),
          str('output.mime_type', 'text/plain'),
          str('session.id', `session-${seed.sequence % 1000}`),
          str('user.id', `user-${seed.sequence % 50}`),
          str('metadata', JSON.stringify({ tenant: 'acme', region: 'eu-west-1' })),
          strings('tag.tags', ['production', 'sales']),
        ],
      },
    });
  },
};

/**
 * Traceloop (OpenLLMetry): indexed `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`, the request type in
 * `llm.request.type`, workflows and tools as `traceloop.span.kind` with their input and output as
 * JSON in `traceloop.entity.input` / `traceloop.entity.output`.
 */
const traceloop: Shape = {
  description: 'Traceloop (OpenLLMetry): gen_ai.prompt.N.*, gen_ai.completion.N.*, traceloop.entity.*',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const association = [
      str('traceloop.association.properties.user_id', `user-${seed.sequence % 50}`),
      str('traceloop.association.properties.session_id', `session-${seed.sequence % 1000}`),
    ];
    const llm = (history: { role: string; content: string }[], completion: Attribute[]): SpanParts => ({
      name: 'openai.chat',
      kind: 3,
      attributes: [
        str('llm.request.type', 'chat'),
        str('gen_ai.system', 'openai'),
        str('gen_ai.request.model', 'gpt-4o-mini'),
        str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
        double('gen_ai.request.temperature', 0.2),
        int('gen_ai.request.max_tokens', 512n),
        str('llm.is_streaming', 'false'),
        str('llm.request.functions.0.name', 'search_reports'),
        str('llm.request.functions.0.description', TOOL_DESCRIPTION),
        str('llm.request.functions.0.parameters', JSON.stringify(TOOL_PARAMETERS)),
        ...history.flatMap((message, n) => [
          str(`gen_ai.prompt.${n}.role`, message.role),
          str(`gen_ai.prompt.${n}.content`, message.content),
        ]),
        ...completion,
        int('gen_ai.usage.prompt_tokens', 412n),
        int('gen_ai.usage.completion_tokens', 96n),
        int('llm.usage.total_tokens', 508n),
        ...association,
      ],
    });
    const history = conversation(seed);
    return agentTurn(span, {
      askTool: llm(history, [
        str('gen_ai.completion.0.role', 'assistant'),
        str('gen_ai.completion.0.finish_reason', 'tool_calls'),
        str('gen_ai.completion.0.tool_calls.0.id', `call_${seed.token()}`),
        str('gen_ai.completion.0.tool_calls.0.name', 'search_reports'),
        str('gen_ai.completion.0.tool_calls.0.arguments', TOOL_ARGUMENTS),
      ]),
      tool: {
        name: 'search_reports.tool',
        kind: 1,
        attributes: [
          str('traceloop.span.kind', 'tool'),
          str('traceloop.entity.name', 'search_reports'),
          str('traceloop.workflow.name', 'sales_agent'),
          str('traceloop.entity.input', JSON.stringify({ args: [], kwargs: JSON.parse(TOOL_ARGUMENTS) })),
          str('traceloop.entity.output', toolResult(seed)),
          ...association,
        ],
      },
      answer: llm(
        [...history, { role: 'tool', content: toolResult(seed) }],
        [
          str('gen_ai.completion.0.role', 'assistant'),
          str('gen_ai.completion.0.finish_reason', 'stop'),
          str('gen_ai.completion.0.content', finalAnswer(seed)),
        ],
      ),
      agent: {
        name: 'sales_agent.workflow',
        kind: 1,
        attributes: [
          str('traceloop.span.kind', 'workflow'),
          str('traceloop.entity.name', 'sales_agent'),
          str('traceloop.workflow.name', 'sales_agent'),
          str('traceloop.entity.input', JSON.stringify({ args: [question(seed)], kwargs: {} })),
          str('traceloop.entity.output', JSON.stringify(SHORT_ANSWER)),
          ...association,
        ],
      },
    });
  },
};

/**
 * The Vercel AI SDK's telemetry: `ai.generateText` around its provider calls
 * (`ai.generateText.doGenerate`, the prompt as JSON `ai.prompt.messages` with content parts, the
 * answer as `ai.response.text` / `ai.response.toolCalls`) and an `ai.toolCall` span.
 */
const vercel: Shape = {
  description: 'Vercel AI SDK: ai.generateText(.doGenerate), ai.prompt.messages, ai.response.*, ai.toolCall',
  resource: serviceResource('nodejs', 'opentelemetry'),
  trace(span, seed) {
    const telemetry = [
      str('ai.telemetry.functionId', 'sales-agent'),
      str('ai.telemetry.metadata.userId', `user-${seed.sequence % 50}`),
      str('ai.telemetry.metadata.sessionId', `session-${seed.sequence % 1000}`),
      str('ai.model.provider', 'openai.chat'),
      str('ai.model.id', 'gpt-4o-mini'),
      int('ai.settings.maxRetries', 2n),
      double('ai.settings.temperature', 0.2),
    ];
    const callId = `call_${seed.token()}`;
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: [{ type: 'text', text: PREVIOUS_QUESTION }] },
      { role: 'assistant', content: [{ type: 'text', text: PREVIOUS_ANSWER }] },
      { role: 'user', content: [{ type: 'text', text: question(seed) }] },
    ];
    const doGenerate = (prompt: object[], response: Attribute[]): SpanParts => ({
      name: 'ai.generateText.doGenerate',
      kind: 3,
      attributes: [
        str('operation.name', 'ai.generateText.doGenerate sales-agent'),
        str('ai.operationId', 'ai.generateText.doGenerate'),
        ...telemetry,
        str('ai.prompt.format', 'messages'),
        str('ai.prompt.messages', JSON.stringify(prompt)),
        strings('ai.prompt.tools', [TOOL_DEFINITIONS]),
        str('ai.prompt.toolChoice', '{"type":"auto"}'),
        ...response,
        str('ai.response.id', `chatcmpl-${seed.token()}`),
        str('ai.response.model', 'gpt-4o-mini-2024-07-18'),
        int('ai.usage.promptTokens', 412n),
        int('ai.usage.completionTokens', 96n),
        str('gen_ai.system', 'openai.chat'),
        str('gen_ai.request.model', 'gpt-4o-mini'),
        double('gen_ai.request.temperature', 0.2),
        int('gen_ai.usage.input_tokens', 412n),
        int('gen_ai.usage.output_tokens', 96n),
      ],
    });
    const toolCall = {
      type: 'tool-call',
      toolCallId: callId,
      toolName: 'search_reports',
      args: JSON.parse(TOOL_ARGUMENTS),
    };
    return agentTurn(span, {
      askTool: doGenerate(messages, [
        str('ai.response.finishReason', 'tool-calls'),
        str(
          'ai.response.toolCalls',
          JSON.stringify([
            { toolCallType: 'function', toolCallId: callId, toolName: 'search_reports', args: TOOL_ARGUMENTS },
          ]),
        ),
      ]),
      tool: {
        name: 'ai.toolCall',
        kind: 1,
        attributes: [
          str('operation.name', 'ai.toolCall sales-agent'),
          str('ai.operationId', 'ai.toolCall'),
          str('ai.toolCall.name', 'search_reports'),
          str('ai.toolCall.id', callId),
          str('ai.toolCall.args', TOOL_ARGUMENTS),
          str('ai.toolCall.result', toolResult(seed)),
          str('ai.telemetry.functionId', 'sales-agent'),
        ],
      },
      answer: doGenerate(
        [
          ...messages,
          { role: 'assistant', content: [toolCall] },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: callId,
                toolName: 'search_reports',
                result: JSON.parse(toolResult(seed)),
              },
            ],
          },
        ],
        [str('ai.response.finishReason', 'stop'), str('ai.response.text', finalAnswer(seed))],
      ),
      agent: {
        name: 'ai.generateText',
        kind: 1,
        attributes: [
          str('operation.name', 'ai.generateText sales-agent'),
          str('ai.operationId', 'ai.generateText'),
          ...telemetry,
          str('ai.prompt', JSON.stringify({ system: SYSTEM_PROMPT, prompt: question(seed) })),
          str('ai.response.finishReason', 'stop'),
          str('ai.response.text', finalAnswer(seed)),
          int('ai.usage.promptTokens', 824n),
          int('ai.usage.completionTokens', 192n),
        ],
      },
    });
  },
};

/** OTel GenAI's `execute_tool` span of the report search, with what else the instrumentation records. */
const executeTool = (callId: string, attributes: Attribute[]): SpanParts => ({
  name: 'execute_tool search_reports',
  kind: 1,
  attributes: [
    str('gen_ai.operation.name', 'execute_tool'),
    str('gen_ai.tool.name', 'search_reports'),
    str('gen_ai.tool.call.id', callId),
    ...attributes,
  ],
});

/** OTel GenAI's `invoke_agent` root span of the sales agent's turn. */
const invokeAgent = (seed: TraceSeed, attributes: Attribute[], events?: SpanEvent[]): SpanParts => ({
  name: 'invoke_agent sales_agent',
  kind: 1,
  attributes: [
    str('gen_ai.operation.name', 'invoke_agent'),
    str('gen_ai.agent.name', 'sales_agent'),
    str('gen_ai.conversation.id', `session-${seed.sequence % 1000}`),
    ...attributes,
  ],
  events,
});

/** An OpenAI chat completion object in the `choices` form, as some instrumentations record it. */
const choicesCompletion = (seed: TraceSeed, message: object, finish: string) =>
  JSON.stringify({
    id: `chatcmpl-${seed.token()}`,
    object: 'chat.completion',
    created: 1_764_000_000 + seed.sequence,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { ...message, refusal: null }, logprobs: null, finish_reason: finish }],
    usage: {
      prompt_tokens: 412,
      completion_tokens: 96,
      total_tokens: 508,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0 },
    },
    system_fingerprint: 'fp_0ba0d124f1',
  });

/** An OTel GenAI model call whose prompt is a JSON object `{messages}` and completion the `choices` form. */
const jsonObjectLlm = (seed: TraceSeed, messages: object[], answer: object, finish: string): SpanParts => ({
  name: 'chat gpt-4o-mini',
  kind: 3,
  attributes: [
    ...OPENAI_CALL,
    str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
    double('gen_ai.request.temperature', 0.2),
    int('gen_ai.request.max_tokens', 512n),
    str('gen_ai.prompt', JSON.stringify({ messages })),
    str('gen_ai.completion', choicesCompletion(seed, answer, finish)),
    int('gen_ai.usage.input_tokens', 412n),
    int('gen_ai.usage.output_tokens', 96n),
  ],
});

const toolCallMessage = (seed: TraceSeed) => ({
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: `call_${seed.token()}`, type: 'function', function: { name: 'search_reports', arguments: TOOL_ARGUMENTS } },
  ],
});

/** OTel GenAI attributes with `gen_ai.prompt` a JSON object (~1.5 KB) and `gen_ai.completion` a chat completion (~1 KB). */
const otelJson: Shape = {
  description:
    'OTel GenAI: gen_ai.prompt as a JSON object {messages} (~1.5 KB), gen_ai.completion in the choices form (~1 KB)',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const history = conversation(seed);
    return agentTurn(span, {
      askTool: jsonObjectLlm(seed, history, toolCallMessage(seed), 'tool_calls'),
      tool: executeTool(`call_${seed.token()}`, [
        str('input.value', TOOL_ARGUMENTS),
        str('output.value', toolResult(seed)),
      ]),
      answer: jsonObjectLlm(
        seed,
        [...history, { role: 'tool', content: toolResult(seed) }],
        { role: 'assistant', content: finalAnswer(seed) },
        'stop',
      ),
      agent: invokeAgent(seed, [
        str('gen_ai.prompt', JSON.stringify({ messages: [{ role: 'user', content: question(seed) }] })),
        str('gen_ai.completion', JSON.stringify({ messages: [{ role: 'assistant', content: SHORT_ANSWER }] })),
      ]),
    });
  },
};

/** The current OTel GenAI conventions' messages: role and typed parts. */
const partsMessages = (seed: TraceSeed) => [
  { role: 'user', parts: [{ type: 'text', content: PREVIOUS_QUESTION }] },
  { role: 'assistant', parts: [{ type: 'text', content: PREVIOUS_ANSWER }] },
  { role: 'user', parts: [{ type: 'text', content: question(seed) }] },
];

/**
 * The current OTel GenAI conventions: `gen_ai.input.messages` / `gen_ai.output.messages` /
 * `gen_ai.system_instructions` as JSON with typed parts, tool definitions, an `execute_tool` span.
 */
const otelMessages: Shape = {
  description: 'OTel GenAI (current): gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const callId = `call_${seed.token()}`;
    const llm = (input: object[], output: object[]): SpanParts => ({
      name: 'chat gpt-4o-mini',
      kind: 3,
      attributes: [
        str('gen_ai.provider.name', 'openai'),
        str('gen_ai.operation.name', 'chat'),
        str('gen_ai.request.model', 'gpt-4o-mini'),
        str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
        str('gen_ai.response.id', `chatcmpl-${seed.token()}`),
        strings('gen_ai.response.finish_reasons', ['stop']),
        double('gen_ai.request.temperature', 0.2),
        int('gen_ai.request.max_tokens', 512n),
        str('gen_ai.system_instructions', JSON.stringify([{ type: 'text', content: SYSTEM_PROMPT }])),
        str('gen_ai.tool.definitions', TOOL_DEFINITIONS),
        str('gen_ai.input.messages', JSON.stringify(input)),
        str('gen_ai.output.messages', JSON.stringify(output)),
        int('gen_ai.usage.input_tokens', 412n),
        int('gen_ai.usage.output_tokens', 96n),
      ],
    });
    const history = partsMessages(seed);
    const call = { type: 'tool_call', id: callId, name: 'search_reports', arguments: JSON.parse(TOOL_ARGUMENTS) };
    return agentTurn(span, {
      askTool: llm(history, [{ role: 'assistant', parts: [call], finish_reason: 'tool_call' }]),
      tool: executeTool(callId, [
        str('gen_ai.tool.type', 'function'),
        str('gen_ai.input.messages', JSON.stringify([{ role: 'assistant', parts: [call] }])),
        str(
          'gen_ai.output.messages',
          JSON.stringify([
            { role: 'tool', parts: [{ type: 'tool_call_response', id: callId, response: toolResult(seed) }] },
          ]),
        ),
      ]),
      answer: llm(
        [
          ...history,
          { role: 'assistant', parts: [call] },
          { role: 'tool', parts: [{ type: 'tool_call_response', id: callId, response: toolResult(seed) }] },
        ],
        [{ role: 'assistant', parts: [{ type: 'text', content: finalAnswer(seed) }], finish_reason: 'stop' }],
      ),
      agent: {
        name: 'invoke_agent sales_agent',
        kind: 1,
        attributes: [
          str('gen_ai.operation.name', 'invoke_agent'),
          str('gen_ai.provider.name', 'openai'),
          str('gen_ai.agent.name', 'sales_agent'),
          str('gen_ai.agent.id', 'asst_5j66UpCpwteGg4YSxUnt7lPY'),
          str('gen_ai.conversation.id', `session-${seed.sequence % 1000}`),
          str(
            'gen_ai.input.messages',
            JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: question(seed) }] }]),
          ),
          str(
            'gen_ai.output.messages',
            JSON.stringify([
              { role: 'assistant', parts: [{ type: 'text', content: SHORT_ANSWER }], finish_reason: 'stop' },
            ]),
          ),
        ],
      },
    });
  },
};

/**
 * OTel GenAI message events on the span (`gen_ai.system.message`, `gen_ai.user.message`,
 * `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`), as the OpenTelemetry
 * instrumentations of the OpenAI and Bedrock clients record content when asked to.
 */
const otelEvents: Shape = {
  description: 'OTel GenAI span events: gen_ai.{system,user,assistant,tool}.message and gen_ai.choice',
  resource: serviceResource('python', 'opentelemetry'),
  trace(span, seed) {
    const callId = `call_${seed.token()}`;
    const history = (offset: bigint) => [
      event('gen_ai.system.message', offset, [str('gen_ai.system', 'openai'), str('content', SYSTEM_PROMPT)]),
      event('gen_ai.user.message', offset, [str('gen_ai.system', 'openai'), str('content', PREVIOUS_QUESTION)]),
      event('gen_ai.assistant.message', offset, [str('gen_ai.system', 'openai'), str('content', PREVIOUS_ANSWER)]),
      event('gen_ai.user.message', offset, [str('gen_ai.system', 'openai'), str('content', question(seed))]),
    ];
    const llm = (events: SpanEvent[]): SpanParts => ({
      name: 'chat gpt-4o-mini',
      kind: 3,
      attributes: [
        ...OPENAI_CALL,
        str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
        str('gen_ai.response.id', `chatcmpl-${seed.token()}`),
        strings('gen_ai.response.finish_reasons', ['stop']),
        double('gen_ai.request.temperature', 0.2),
        int('gen_ai.request.max_tokens', 512n),
        str('server.address', 'api.openai.com'),
        int('server.port', 443n),
        int('gen_ai.usage.input_tokens', 412n),
        int('gen_ai.usage.output_tokens', 96n),
      ],
      events,
    });
    return agentTurn(span, {
      askTool: llm([
        ...history(1_000_000n),
        event('gen_ai.choice', 1_900_000n, [
          str('gen_ai.system', 'openai'),
          int('index', 0n),
          str('finish_reason', 'tool_calls'),
          str('message.role', 'assistant'),
          str('tool_calls.0.id', callId),
          str('tool_calls.0.type', 'function'),
          str('tool_calls.0.function.name', 'search_reports'),
          str('tool_calls.0.function.arguments', TOOL_ARGUMENTS),
        ]),
      ]),
      tool: executeTool(callId, [str('input.value', TOOL_ARGUMENTS), str('output.value', toolResult(seed))]),
      answer: llm([
        ...history(3_000_000n),
        event('gen_ai.tool.message', 3_000_000n, [
          str('gen_ai.system', 'openai'),
          str('content', toolResult(seed)),
          str('id', callId),
        ]),
        event('gen_ai.choice', 3_900_000n, [
          str('gen_ai.system', 'openai'),
          int('index', 0n),
          str('finish_reason', 'stop'),
          { key: 'message', value: kvlist({ role: 'assistant', content: finalAnswer(seed) }) },
        ]),
      ]),
      agent: invokeAgent(
        seed,
        [],
        [
          event('gen_ai.user.message', 0n, [str('content', question(seed))]),
          event('gen_ai.choice', 4_000_000n, [
            int('index', 0n),
            str('finish_reason', 'stop'),
            { key: 'message', value: kvlist({ role: 'assistant', content: SHORT_ANSWER }) },
          ]),
        ],
      ),
    });
  },
};

/**
 * A mix measured outside these benchmarks, and unlike any of them: 3-span traces of an agent root
 * with LangSmith attributes (JSON `input.value` / `output.value`, `langsmith.metadata.*`), a model
 * call with OTel GenAI attributes whose prompt is a JSON object and completion the `choices` form,
 * and a tool call with `input.value` / `output.value`.
 */
const heldOut: Shape = {
  description: 'held-out mix: 3-span traces of a LangSmith-attribute root, a JSON-object gen_ai model call, a tool',
  resource: serviceResource('python', 'opentelemetry'),
  trace: (span, seed) =>
    heldOutTrace(span, seed, toolResult(seed), [
      ...langsmithMetadata(seed),
      str('langsmith.metadata.environment', 'production'),
    ]),
};

/** `held-out`'s three spans: the tool returns `toolOutput`, the root carries `metadata`. */
function heldOutTrace(span: SpanMaker, seed: TraceSeed, toolOutput: string, metadata: Attribute[]): Span[] {
  const call = jsonObjectLlm(
    seed,
    [...conversation(seed), { role: 'tool', content: toolOutput }],
    { role: 'assistant', content: finalAnswer(seed) },
    'stop',
  );
  return [
    span(call.name, 'root', call.kind, call.attributes, 1_000_000n),
    span(
      'search_reports',
      'root',
      1,
      [str('input.value', TOOL_ARGUMENTS), str('output.value', toolOutput)],
      2_000_000n,
    ),
    span(
      'sales_agent',
      '',
      1,
      [
        str('langsmith.span.kind', 'chain'),
        ...metadata,
        str('input.value', JSON.stringify({ messages: [{ role: 'user', content: question(seed) }] })),
        str('output.value', JSON.stringify({ messages: [{ role: 'assistant', content: finalAnswer(seed) }] })),
      ],
      0n,
    ),
  ];
}

/** Passages of the retrieval tool in `documents`: German in even traces, Chinese in odd ones. */
const PASSAGES = [
  'Der Umsatz im dritten Quartal stieg um 12 % auf 4,2 Mio. €, getragen von Vertragsverlängerungen ' +
    'großer Unternehmenskunden. Die Bruttoabwanderung sank von 5 % auf 3 %; zwei Kunden aus dem ' +
    'Mittelstand kündigten wegen Budgetkürzungen. ',
  '第三季度收入增长百分之十二，达到四百二十万欧元，主要来自大型企业客户的续约。总流失率从百分之五降至百分之三；' +
    '两家中型客户因预算削减而终止合作。合格销售管道共有九点八百万欧元。',
];

/** ~3 KB of retrieved passages, as a retrieval tool returns them to the model. */
const retrievedPassages = (seed: TraceSeed) => {
  const passage = PASSAGES[seed.sequence % 2]!;
  const count = Math.ceil(3000 / Buffer.byteLength(passage));
  return JSON.stringify({
    hits: Array.from({ length: count }, (_, i) => ({
      report: 'Q3-2026-sales.pdf',
      page: i + 1,
      text: `${seed.sequence}.${i} ${passage}`,
    })),
  });
};

const documents: Shape = {
  description:
    'held-out mix whose tool returns ~3 KB of passages in German or Chinese, which the model call carries again',
  resource: serviceResource('python', 'opentelemetry'),
  trace: (span, seed) => heldOutTrace(span, seed, retrievedPassages(seed), langsmithMetadata(seed)),
};

export const SHAPES = {
  realistic,
  small,
  langsmith,
  openinference,
  traceloop,
  vercel,
  'otel-json': otelJson,
  'otel-messages': otelMessages,
  'otel-events': otelEvents,
  'held-out': heldOut,
  documents,
} satisfies Record<string, Shape>;

// The proxy benchmarks' workload (proxy.ts, stages.ts, bench/gateway): OTLP/protobuf requests of
// traces of an agent root, an LLM call, a tool call and a second LLM call, each request with fresh
// ids. Two payloads:
//   - `realistic` (the default): about 1.4 KB per span on the wire, as instrumented agents send —
//     a system prompt and a conversation of real length, completions of a few sentences, tool
//     arguments and results as JSON, response ids, finish reasons and sampling parameters — and
//     spans in the order an SDK's batch span processor exports them (children end, and so arrive,
//     before their parent);
//   - `small`: about 390 bytes per span, the root first (the figures before 2026-11-24 used it).

import { randomBytes } from 'node:crypto';
import type { Attribute, Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { intAttr as int, makeBatch as batchOf, plainSpan, stringAttr as str } from '../../src/testkit/spans.ts';

export type Payload = 'realistic' | 'small';
export const PAYLOADS: readonly Payload[] = ['realistic', 'small'];

const SYSTEM_PROMPT =
  'You are a financial analysis assistant for the sales organisation. Answer with short, factual ' +
  'bullet points. Use the search_reports tool to look up quarterly figures before you answer, cite ' +
  'the report you used, and never invent numbers. If the question is ambiguous, state the ' +
  'assumption you made. Amounts are in euros unless the report says otherwise; round percentages ' +
  'to whole numbers.';

const PREVIOUS_ANSWER =
  'The Nordics closed the most new business in Q2: 1.1 M€ across 14 deals, ahead of DACH (0.9 M€, ' +
  '11 deals) and Benelux (0.6 M€, 9 deals). Most of it came from two enterprise expansions signed in ' +
  'the last week of June (Q2-2026-sales.pdf, p. 5).';

const TOOL_DEFINITIONS = JSON.stringify([
  {
    type: 'function',
    name: 'search_reports',
    description: 'Searches the quarterly sales and pipeline reports; returns matching passages with their page.',
    parameters: {
      type: 'object',
      properties: {
        quarter: { type: 'string', enum: ['Q1', 'Q2', 'Q3', 'Q4'] },
        year: { type: 'integer' },
        sections: { type: 'array', items: { type: 'string' } },
      },
      required: ['quarter', 'year'],
    },
  },
]);

/** What every LLM span of both payloads says of its call. */
const CHAT_CALL = [
  str('gen_ai.system', 'openai'),
  str('gen_ai.operation.name', 'chat'),
  str('gen_ai.request.model', 'gpt-4o-mini'),
];

const double = (key: string, value: number): Attribute => ({ key, value: { type: 'double', value } });

function realisticTrace(
  span: (name: string, parent: string, kind: number, attributes: Attribute[], offset: bigint) => Span,
  rootId: string,
  sequence: number,
  index: number,
): Span[] {
  const question =
    `Request ${sequence}-${index}: summarise the quarterly report for the sales team in three bullet ` +
    'points, and compare revenue, churn and pipeline with the previous quarter.';
  const hits = JSON.stringify({
    hits: [
      { report: 'Q3-2026-sales.pdf', page: 4, text: 'Revenue 4.2 M€ (+12% q/q), driven by enterprise renewals.' },
      { report: 'Q3-2026-sales.pdf', page: 7, text: 'Gross churn 3% (Q2: 5%); two mid-market losses.' },
      { report: 'Q3-2026-pipeline.xlsx', page: 1, text: `Qualified pipeline ${sequence % 97} deals, 9.8 M€.` },
    ],
  });
  const llm = (offset: bigint, messages: object[], answer: string, finish: string) =>
    span(
      'chat gpt-4o-mini',
      rootId,
      3,
      [
        ...CHAT_CALL,
        str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
        str('gen_ai.response.id', `chatcmpl-${randomBytes(12).toString('base64url')}`),
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
      offset,
    );
  const conversation = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: 'Which region closed the most new business last quarter?' },
    { role: 'assistant', content: PREVIOUS_ANSWER },
    { role: 'user', content: question },
  ];
  return [
    llm(1_000_000n, conversation, 'Calling search_reports({"quarter":"Q3","year":2026}).', 'tool_calls'),
    span(
      'search_reports',
      rootId,
      1,
      [
        str('openinference.span.kind', 'TOOL'),
        str('tool.name', 'search_reports'),
        str('input.value', '{"quarter":"Q3","year":2026,"sections":["revenue","churn","pipeline"]}'),
        str('output.value', hits),
      ],
      2_000_000n,
    ),
    llm(
      3_000_000n,
      [...conversation, { role: 'tool', content: hits }],
      '- Revenue grew 12% to 4.2 M€, driven by enterprise renewals (Q3-2026-sales.pdf, p. 4).\n' +
        '- Churn fell from 5% to 3%; the two losses were mid-market accounts (p. 7).\n' +
        `- The qualified pipeline holds ${sequence % 97} deals worth 9.8 M€ (Q3-2026-pipeline.xlsx).`,
      'stop',
    ),
    span(
      'agent',
      '',
      2,
      [
        str('openinference.span.kind', 'AGENT'),
        str('input.value', question),
        str('output.value', 'Revenue +12% (4.2 M€), churn down to 3%, pipeline 9.8 M€.'),
        str('session.id', `session-${sequence % 1000}`),
        str('user.id', `user-${sequence % 50}`),
      ],
      0n,
    ),
  ];
}

function smallTrace(
  span: (name: string, parent: string, kind: number, attributes: Attribute[], offset: bigint) => Span,
  rootId: string,
  sequence: number,
  index: number,
): Span[] {
  const question = `Request ${sequence}-${index}: summarise the quarterly report for the sales team in three bullet points.`;
  const llm = (offset: bigint) =>
    span(
      'chat gpt-4o-mini',
      rootId,
      1,
      [
        ...CHAT_CALL,
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
              content: `- Revenue grew 12%.\n- Churn fell to 3%.\n- Pipeline is ${sequence % 97} deals.`,
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
      rootId,
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
}

/** One request of `spans` spans: traces of an agent root with an LLM call, a tool call and a second LLM call. */
export function makeBatch(spans: number, sequence: number, payload: Payload = 'realistic'): SpanBatch {
  const list: Span[] = [];
  const base = BigInt(Date.now()) * 1_000_000n;
  const trace = payload === 'realistic' ? realisticTrace : smallTrace;
  while (list.length < spans) {
    const traceId = randomBytes(16).toString('hex');
    const rootId = randomBytes(8).toString('hex');
    const span = (name: string, parent: string, kind: number, attributes: Attribute[], offset: bigint): Span =>
      plainSpan({
        traceId,
        spanId: parent === '' ? rootId : randomBytes(8).toString('hex'),
        parentSpanId: parent,
        flags: 1,
        name,
        kind,
        startTimeUnixNano: base + offset,
        endTimeUnixNano: base + offset + 900_000_000n,
        attributes,
      });
    list.push(...trace(span, rootId, sequence, list.length));
  }
  const resource =
    payload === 'realistic'
      ? [
          str('service.name', 'sales-assistant'),
          str('service.version', '2.14.1'),
          str('deployment.environment.name', 'production'),
          str('telemetry.sdk.language', 'python'),
          str('telemetry.sdk.name', 'opentelemetry'),
          str('telemetry.sdk.version', '1.38.0'),
          str('host.name', `worker-${sequence % 8}`),
        ]
      : [str('service.name', 'bench-app')];
  return batchOf(list.slice(0, spans), { resource, scope: { name: 'bench', version: '1.0.0' } });
}

/** The same request, encoded as OTLP/protobuf. */
export function makeRequest(spans: number, sequence: number, payload: Payload = 'realistic'): Uint8Array {
  return encodeTraceRequestProtobuf(makeBatch(spans, sequence, payload));
}

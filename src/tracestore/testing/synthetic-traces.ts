// Agent traces shaped like a real deployment's, for large-store benchmarks and tests: a root chain
// with model calls, tool calls and a retrieval under it, in projects, root names and models of
// unequal popularity (one model no price table knows), with failures, prompt-cache reads, costs
// some apps report themselves, conversations (LangSmith's thread_id and session_id) and messages
// drawn from a vocabulary where a few words are common and most are rare. Deterministic: the same
// seed gives the same traces, ids included.
//
// Words a benchmark can search for: every trace is about one of TOPICS (so "refund" is in about one
// trace in nine), and a tool output of one trace in RARE_EVERY holds "quokka".

import type { Run } from '../../model/runs.ts';

export const TOPICS = [
  'order',
  'refund',
  'shipping',
  'invoice',
  'weather',
  'delivery',
  'account',
  'password',
  'warranty',
];
export const RARE_WORD = 'quokka';
export const RARE_EVERY = 1000;

/** [value, weight] lists: the projects, each with its root names; the models with their providers. */
const PROJECTS: [string, number, string[]][] = [
  ['shop', 40, ['checkout agent', 'recommendations', 'cart assistant']],
  ['support', 25, ['support agent', 'triage', 'refund bot']],
  ['search', 15, ['search agent', 'query rewriter']],
  ['billing', 10, ['invoice agent']],
  ['internal-tools', 10, ['sql agent', 'docs qa']],
];
const MODELS: [string, string, number][] = [
  ['gpt-4o-mini', 'openai', 45],
  ['claude-3-5-haiku-20241022', 'anthropic', 20],
  ['gpt-4o', 'openai', 15],
  ['claude-sonnet-4-20250514', 'anthropic', 10],
  ['gemini-2.0-flash', 'google', 5],
  ['house-llama-70b', 'vllm', 5],
];
const TOOLS = ['lookup_order', 'search_docs', 'get_customer', 'create_ticket', 'run_sql', 'send_email'];
// A vocabulary for message text, drawn Zipf-like: the first words are frequent, the last rare.
const VOCABULARY = (
  'the a to is it my for and not was on with can you please help when how what why this that have ' +
  'customer package arrived late broken missing tracking number status email address phone card charge ' +
  'twice cancel subscription plan upgrade downgrade discount coupon code expired store pickup return ' +
  'label printer size colour exchange receipt gift balance points loyalty tier premium trial login ' +
  'locked reset verification link spam folder notification app crash update version android iphone ' +
  'browser cookie session timeout error message blank page checkout cart item stock backorder supplier ' +
  'warehouse courier signature neighbour doorstep weekend holiday schedule appointment technician repair ' +
  'screen battery charger cable adapter manual installation firmware bluetooth wifi router modem outage ' +
  'region zipcode postcode customs duty tax invoice vat company purchase bulk quote contract renewal'
).split(' ');

/** A small fast deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SyntheticOptions {
  /** Stop once this many runs have been made (the last trace is whole). */
  readonly runs: number;
  /** Trace starts are spread evenly over [endMs − spanMs, endMs). */
  readonly endMs: number;
  readonly spanMs: number;
  readonly seed?: number;
}

/** Traces (each its runs, root first), oldest first. */
export function* syntheticTraces(options: SyntheticOptions): Generator<Run[]> {
  const next = random(options.seed ?? 1);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const weighted = <T extends unknown[]>(items: readonly T[], weight: (item: T) => number): T => {
    let left = next() * items.reduce((sum, item) => sum + weight(item), 0);
    for (const item of items) if ((left -= weight(item)) < 0) return item;
    return items.at(-1)!;
  };
  const words = (count: number) =>
    Array.from({ length: count }, () => VOCABULARY[Math.floor(VOCABULARY.length * next() ** 3)]!).join(' ');
  const uuid = () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  };
  const iso = (us: number) =>
    new Date(Math.floor(us / 1000)).toISOString().replace('Z', `${String(us % 1000).padStart(3, '0')}Z`);
  const stamp = (us: number) => iso(us).replace(/[-:.]/g, '');
  // About 5 runs a trace: the expected count of traces for the runs asked for, to spread them.
  const expectedTraces = Math.max(Math.ceil(options.runs / 5.2), 1);
  const stepUs = (options.spanMs * 1000) / expectedTraces;
  const startUs = (options.endMs - options.spanMs) * 1000;
  let made = 0;
  for (let n = 0; made < options.runs; n++) {
    const traceStart = Math.floor(startUs + n * stepUs + next() * stepUs);
    const [project, , roots] = weighted(PROJECTS, (p) => p[1]);
    const [model, provider] = weighted(MODELS, (m) => m[2]);
    const topic = TOPICS[n % TOPICS.length]!;
    const question = `${words(4)} my ${topic} ${words(6 + Math.floor(next() * 10))}?`;
    const rootId = uuid();
    const rootOrder = `${stamp(traceStart)}${rootId}`;
    const runs: Run[] = [];
    let offsetUs = 10_000;
    const child = (durationUs: number, fields: Partial<Run>): Run => {
      const id = uuid();
      const start = traceStart + offsetUs;
      offsetUs += durationUs + 5_000;
      const run: Run = {
        id,
        trace_id: rootId,
        parent_run_id: rootId,
        name: 'child',
        run_type: 'chain',
        start_time: iso(start),
        end_time: iso(start + durationUs),
        dotted_order: `${rootOrder}.${stamp(start)}${id}`,
        status: 'success',
        session_name: project,
        extra: { metadata: {} },
        ...fields,
      };
      runs.push(run);
      return run;
    };
    const llm = (answer: string) => {
      if (next() < 0.01) {
        return child(200_000, {
          name: `Chat ${model}`,
          run_type: 'llm',
          status: 'error',
          error: 'RateLimitError: rate limit reached for requests',
          inputs: { messages: [{ role: 'user', content: question }] },
          extra: { metadata: { ls_model_name: model, ls_provider: provider } },
        });
      }
      const input = 200 + Math.floor(next() ** 2 * 4000);
      const output = 20 + Math.floor(next() ** 2 * 800);
      const cached = provider !== 'vllm' && next() < 0.3 ? Math.floor(input * 0.6) : 0;
      const reported = next() < 0.02 ? { total_cost: Math.round(input * 3 + output * 12) / 1e6 } : {};
      return child(300_000 + Math.floor(next() * 3_000_000), {
        name: `Chat ${model}`,
        run_type: 'llm',
        inputs: { messages: [{ role: 'user', content: question }] },
        outputs: {
          generations: [{ text: answer }],
          usage_metadata: {
            input_tokens: input,
            output_tokens: output,
            total_tokens: input + output,
            ...(cached > 0 ? { input_token_details: { cache_read: cached } } : {}),
            ...reported,
          },
        },
        extra: { metadata: { ls_model_name: model, ls_provider: provider } },
      });
    };
    llm(`Let me check the ${topic}.`);
    let failed = false;
    const rare = n % RARE_EVERY === 0;
    for (let t = Math.max(Math.floor(next() * 3), rare ? 1 : 0); t > 0; t--) {
      const tool = pick(TOOLS);
      const fails = !rare && next() < 0.04;
      failed ||= fails;
      child(20_000 + Math.floor(next() * 900_000), {
        name: tool,
        run_type: 'tool',
        inputs: { input: `${topic} ${Math.floor(next() * 1e6)}` },
        ...(fails
          ? { status: 'error', error: `ToolException: ${tool} timed out after 30 s` }
          : {
              outputs: {
                output: rare && t === 1 ? `A ${RARE_WORD} signed for the parcel.` : words(12),
              },
            }),
      });
    }
    if (next() < 0.5) {
      child(50_000 + Math.floor(next() * 200_000), {
        name: 'retrieve_policy',
        run_type: 'retriever',
        inputs: { query: topic },
        outputs: { documents: [{ page_content: `Policy on ${topic}: ${words(20)}` }] },
      });
    }
    const answer = `${words(3)} your ${topic} ${words(8)}.`;
    llm(answer);
    const conversation = next();
    const metadata =
      conversation < 0.4
        ? { thread_id: `thread-${Math.floor(next() * 20_000)}`, assistant_id: roots[0] }
        : conversation < 0.5
          ? { session_id: `session-${Math.floor(next() * 5_000)}` }
          : {};
    const rootFails = failed && next() < 0.5;
    runs.unshift({
      id: rootId,
      trace_id: rootId,
      name: pick(roots),
      run_type: 'chain',
      start_time: iso(traceStart),
      end_time: iso(traceStart + offsetUs + 10_000),
      dotted_order: rootOrder,
      status: rootFails ? 'error' : 'success',
      ...(rootFails ? { error: 'AgentError: a tool failed' } : {}),
      session_name: project,
      inputs: { messages: [{ role: 'user', content: question }] },
      outputs: rootFails ? {} : { messages: [{ role: 'assistant', content: answer }] },
      extra: { metadata },
      tags: [project, `v${1 + (n % 3)}`],
    });
    made += runs.length;
    yield runs;
  }
}

// One span to one run: the pure part of the `genai` processor. Reads every convention the README
// lists (OTel GenAI, OpenInference, `langsmith.*`, Traceloop, the Vercel AI SDK) and builds the
// backend's run record. Tree decisions that need memory across spans (which span is the trace's
// root, which spans were filtered out) are made by the processor, not here.

import type { Run, RunType, InstrumentationScope, Resource, Span } from 'tracepipe/plugin';
import { shareJson, StatusCode } from 'tracepipe/plugin';
import { AttributeMap, KeyList, toJson } from './internal/attributes.ts';
import { readEvents } from './internal/events.ts';
import { idToUuid, isUuid, RecentUuid } from './internal/ids.ts';
import { invocationParamsOf } from './internal/invocation.ts';
import { inputsOf, outputsOf } from './internal/io.ts';
import { metadataOf, tagsOf } from './internal/metadata.ts';
import { hasExplicitRunType, hasKindHint, runTypeOf } from './internal/run-type.ts';
import { nanosToRfc3339 } from './internal/time.ts';
import { usageOf } from './internal/usage.ts';

export interface TranslateOptions {
  /** Copy attributes outside the recognised conventions into `extra.metadata`. */
  readonly genericOtel: boolean;
}

export interface Translated {
  readonly run: Run;
  /** UUID of the span's own id (the run id, except for roots, whose id is the trace UUID). */
  readonly spanUuid: string;
  /** The span starts a trace: no OTel parent, or `langsmith.is_root`. */
  readonly isRoot: boolean;
  /** Whether the span belongs to a GenAI convention (see `isGenAi`). */
  readonly genAi: boolean;
}

/** Why a span could not become a run (its ids are not usable). */
export class InvalidSpanIdError extends Error {
  override readonly name = 'InvalidSpanIdError';
}

// Attribute namespaces the translator reads; `generic_otel` copies everything outside them.
const RECOGNISED_PREFIXES = [
  'gen_ai.',
  'llm.',
  'langsmith.',
  'openinference.',
  'traceloop.',
  'ai.',
  'input.',
  'output.',
  'retrieval.',
  'tool.',
  'tag.',
  'embedding.',
  'reranker.',
];
const RECOGNISED_KEYS = new Set([
  'metadata',
  'session.id',
  'user.id',
  'tools',
  'tool_arguments',
  'prompt',
  'all_messages_events',
  'events',
  'model',
]);

// A span belongs to GenAI when its name or any attribute or event key is in one of these namespaces.
const GENAI_PREFIXES = ['gen_ai.', 'llm.', 'langsmith.', 'openinference.', 'traceloop.', 'ai.'];

const traceUuids = new RecentUuid();
const parentUuids = new RecentUuid();

export function translateSpan(
  span: Span,
  resource: Resource,
  scope: InstrumentationScope,
  project: string,
  options: TranslateOptions,
): Translated {
  const traceUuid = traceUuids.of(span.traceId);
  const spanUuid = idToUuid(span.spanId);
  if (!traceUuid || !spanUuid)
    throw new InvalidSpanIdError(`span ${JSON.stringify(span.name)} has an invalid trace or span id`);
  const parentUuid = span.parentSpanId === '' ? undefined : parentUuids.of(span.parentSpanId);
  if (span.parentSpanId !== '' && !parentUuid) {
    throw new InvalidSpanIdError(`span ${JSON.stringify(span.name)} has an invalid parent span id`);
  }

  const attributes = new AttributeMap(span.attributes);
  const events = readEvents(span.events);
  const isRoot = parentUuid === undefined || attributes.bool('langsmith.is_root') === true;

  let runType = runTypeOf(attributes);
  // A span that records model messages and choices as events (Semantic Kernel names no operation)
  // is a model call even without a kind hint.
  if (runType === 'chain' && !hasKindHint(attributes) && events.choices.length > 0) runType = 'llm';
  // A tool name marks the span that runs a tool, whatever operation name it carries; a prompt
  // template marks a prompt-formatting step. An explicit `langsmith.span.kind` beats both.
  if (!hasExplicitRunType(attributes)) {
    if (attributes.has('gen_ai.tool.name')) runType = 'tool';
    if (attributes.has('llm.prompt_template.variables')) runType = 'prompt';
  }

  const run: Run = {
    id: spanUuid,
    trace_id: traceUuid,
    name: nameOf(span, attributes, runType),
    run_type: runType,
    start_time: nanosToRfc3339(span.startTimeUnixNano),
    end_time: nanosToRfc3339(span.endTimeUnixNano),
    status: 'success',
    session_name: project,
  };
  if (!isRoot) run.parent_run_id = parentUuid;

  const inputs = inputsOf(attributes, events, runType);
  if (inputs) run.inputs = inputs;
  let outputs = outputsOf(attributes, events, runType);
  const usage = usageOf(attributes);
  // Added to the outputs object rather than spread into a copy of it: outputsOf makes a new object
  // for every span, which nothing else holds.
  if (usage) {
    if (outputs === undefined) outputs = { usage_metadata: usage };
    else outputs.usage_metadata = usage;
  }
  if (outputs) run.outputs = outputs;

  const metadata = metadataOf(attributes, span.traceId, span.spanId);
  if (options.genericOtel) {
    for (const key of attributes.keys) {
      if (isRecognised(key) || key in metadata) continue;
      metadata[key] = attributes.json(key);
    }
  }
  const extra: Record<string, unknown> = { metadata };
  const invocationParams = invocationParamsOf(attributes);
  if (invocationParams) extra.invocation_params = invocationParams;
  if (resource.attributes.length > 0) extra.resource = resourceJson(resource);
  if (scope.name !== '')
    extra.scope = scope.version === '' ? { name: scope.name } : { name: scope.name, version: scope.version };
  run.extra = extra;

  const tags = tagsOf(attributes);
  if (tags) run.tags = tags;
  const referenceExample = attributes.string('langsmith.reference_example_id');
  if (referenceExample !== undefined) run.reference_example_id = referenceExample;
  // The backend rejects a whole upload whose `session_id` is not a UUID, so only a UUID passes.
  const sessionId = attributes.string('langsmith.trace.session_id');
  if (sessionId !== undefined && isUuid(sessionId)) run.session_id = sessionId.toLowerCase();

  applyError(run, span, events.exception);
  return { run, spanUuid, isRoot, genAi: isGenAi(span, attributes) };
}

// The resource's attributes as JSON, made once per resource and shared by the runs of its spans
// (see src/model/shared-json.ts): a request's spans mostly come from one resource, and building it
// per span cost about 1 µs of a span's CPU and its own copy in every held run.
const resourceJsonCache = new WeakMap<Resource, Readonly<Record<string, unknown>>>();

// The last resource asked for, before the WeakMap: a request's spans come resource by resource, and
// a WeakMap lookup per span cost more than the rest of this function (2 % of the translator's
// profile on `realistic`). Holding the last one keeps one request's resource alive until the next.
let lastResource: Resource | undefined;
let lastResourceJson: Readonly<Record<string, unknown>> | undefined;

function resourceJson(resource: Resource): Readonly<Record<string, unknown>> {
  if (resource === lastResource) return lastResourceJson!;
  let json = resourceJsonCache.get(resource);
  if (json === undefined) {
    json = shareJson(
      Object.fromEntries(resource.attributes.map((attribute) => [attribute.key, toJson(attribute.value)])),
    );
    resourceJsonCache.set(resource, json);
  }
  lastResource = resource;
  lastResourceJson = json;
  return json;
}

const NAME_KEYS = new KeyList(['langsmith.trace.name', 'traceloop.entity.name']);

function nameOf(span: Span, attributes: AttributeMap, runType: RunType): string {
  const explicit = attributes.firstString(NAME_KEYS);
  if (explicit !== undefined) return explicit;
  if (attributes.string('openinference.span.kind')?.toLowerCase() === 'tool') {
    const toolName = attributes.string('tool.name');
    if (toolName !== undefined) return toolName;
  }
  if (runType === 'tool') {
    const toolName = attributes.string('ai.toolCall.name');
    if (toolName !== undefined) return toolName;
  }
  return span.name;
}

/**
 * Status and error: the first `exception` event (message, then its stack trace), or else an ERROR
 * span status with its message.
 */
function applyError(
  run: Run,
  span: Span,
  exception: { message?: string; type?: string; stacktrace?: string } | undefined,
): void {
  if (exception) {
    run.status = 'error';
    const message = exception.message ?? exception.type;
    const parts = [message, exception.stacktrace === undefined ? undefined : `Stacktrace:\n${exception.stacktrace}`];
    const error = parts.filter((part) => part !== undefined).join('\n\n');
    if (error !== '') run.error = error;
    return;
  }
  if (span.status.code === StatusCode.ERROR) {
    run.status = 'error';
    if (span.status.message !== '') run.error = span.status.message;
  }
}

function isRecognised(key: string): boolean {
  return RECOGNISED_KEYS.has(key) || RECOGNISED_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** GenAI spans are judged by their name, their attribute keys and their event names. */
export function isGenAi(span: Span, attributes: AttributeMap): boolean {
  if (inGenAiNamespace(span.name)) return true;
  for (const key of attributes.keys) if (inGenAiNamespace(key)) return true;
  return span.events.some((event) => event.name.startsWith('gen_ai.'));
}

// At module level rather than a closure inside isGenAi: tsx (esbuild keepNames) wraps every
// function expression in a naming call, which cost one extra call and closure per span (0.4% of
// the translator's profile).
function inGenAiNamespace(key: string): boolean {
  return GENAI_PREFIXES.some((prefix) => key.startsWith(prefix));
}

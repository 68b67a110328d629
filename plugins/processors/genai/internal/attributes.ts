// Typed reads of a span's attributes. OTLP values are tagged (int vs. double vs. string); the
// conventions we translate are sent with whichever type each SDK chose, so the readers here accept
// the forms seen in practice (a token count as an int, a double or a numeric string) and turn
// arrays and key-value lists into plain JSON.

import type { AnyValue, Attribute } from 'tracepipe/plugin';

/**
 * The keys of the attribute lists of one kind (a Vercel model call, a `gen_ai.user.message` event),
 * in their order: where each key's value is in such a list (its last duplicate) and the distinct
 * keys. Spans of one kind carry the same keys in the same order, and the OTLP decoder hands out
 * one string per key (src/otlp/protobuf-reader.ts, `key()`), so a list is matched against a known
 * layout by comparing its keys with `===`, mostly a pointer comparison. A span then costs no Map
 * of its own: building one per span and per event (a set per attribute, the table grown and
 * rehashed on the way) was 5.8 % of the CPU profile of decoding and translating Vercel requests
 * (17 attributes a span), and spans of OTel GenAI events made one per event as well.
 */
class KeyLayout {
  readonly positions = new Map<string, number>();
  /** The distinct keys, in the order of their first occurrence. */
  readonly keys: string[] = [];

  /** @param sequence every key of the lists of this layout, duplicates included */
  constructor(readonly sequence: readonly string[]) {
    for (let i = 0; i < sequence.length; i++) {
      const key = sequence[i]!;
      if (!this.positions.has(key)) this.keys.push(key);
      this.positions.set(key, i);
    }
  }

  /** The namespaces asked of this layout so far, by prefix (see `AttributeMap.namespace`). */
  private namespaces: Map<string, Namespace> | undefined;

  namespace(prefix: string): Namespace {
    this.namespaces ??= new Map();
    let namespace = this.namespaces.get(prefix);
    if (namespace === undefined) {
      const keys = this.keys.filter((key) => key.startsWith(prefix));
      namespace = { keys, names: keys.map((key) => key.slice(prefix.length)) };
      this.namespaces.set(prefix, namespace);
    }
    return namespace;
  }

  /** Where the keys of each `KeyList` asked of this layout are, those it has, in the list's order. */
  private lists: Map<KeyList, readonly number[]> | undefined;

  positionsOf(list: KeyList): readonly number[] {
    this.lists ??= new Map();
    let found = this.lists.get(list);
    if (found === undefined) {
      const positions: number[] = [];
      for (const key of list.keys) {
        const position = this.positions.get(key);
        if (position !== undefined) positions.push(position);
      }
      found = positions;
      this.lists.set(list, found);
    }
    return found;
  }

  /** What was derived from this layout's keys so far, by the deriving caller's key (see `AttributeMap.derived`). */
  private derivations: Map<string, unknown> | undefined;

  derived<T>(key: string, derive: (attributes: AttributeMap, key: string) => T, attributes: AttributeMap): T {
    this.derivations ??= new Map();
    const found = this.derivations.get(key);
    if (found !== undefined || this.derivations.has(key)) return found as T;
    const made = derive(attributes, key);
    this.derivations.set(key, made);
    return made;
  }

  matches(attributes: readonly Attribute[]): boolean {
    const { sequence } = this;
    if (sequence.length !== attributes.length) return false;
    for (let i = 0; i < sequence.length; i++) if (sequence[i] !== attributes[i]!.key) return false;
    return true;
  }
}

// The layouts seen last, replaced in turn: a pipeline sees a few kinds of span and event (four in
// a Vercel trace, five message events), and a stream of lists of unique keys, which no layout
// fits, costs a layout built per list, as a Map per list did before. Lists of more keys than
// LAYOUT_MAX_KEYS get a layout of their own that is not kept, so the cache holds a bounded number of keys.
const LAYOUT_SLOTS = 64;
const LAYOUT_MAX_KEYS = 256;
const layouts: (KeyLayout | undefined)[] = new Array<KeyLayout | undefined>(LAYOUT_SLOTS).fill(undefined);
let nextLayoutSlot = 0;
const NO_KEYS = new KeyLayout([]);

function layoutOf(attributes: readonly Attribute[]): KeyLayout {
  const count = attributes.length;
  if (count === 0) return NO_KEYS;
  const first = attributes[0]!.key;
  const last = attributes[count - 1]!.key;
  for (let slot = 0; slot < LAYOUT_SLOTS; slot++) {
    const layout = layouts[slot];
    if (layout === undefined) break;
    const { sequence } = layout;
    if (
      sequence.length === count &&
      sequence[0] === first &&
      sequence[count - 1] === last &&
      layout.matches(attributes)
    )
      return layout;
  }
  const sequence = new Array<string>(count);
  for (let i = 0; i < count; i++) sequence[i] = attributes[i]!.key;
  const layout = new KeyLayout(sequence);
  if (count <= LAYOUT_MAX_KEYS) {
    layouts[nextLayoutSlot] = layout;
    nextLayoutSlot = (nextLayoutSlot + 1) % LAYOUT_SLOTS;
  }
  return layout;
}

/**
 * A constant list of keys read in order of preference (the keys of a token count, of the provider's
 * name). Which of them a layout has, and where, is found once per layout, so that a span reads the
 * few it carries instead of looking up every key of every list: the translator's lists name about
 * fifty keys, nearly all of them absent from any one span.
 */
export class KeyList {
  constructor(readonly keys: readonly string[]) {}
}

/** The keys under a namespace prefix, in attribute order, and the name that follows the prefix in each. */
export interface Namespace {
  readonly keys: readonly string[];
  readonly names: readonly string[];
}

/** The attributes of one span, by key (the last duplicate wins), with the typed readers below. */
export class AttributeMap {
  private readonly attributes: readonly Attribute[];
  private readonly layout: KeyLayout;
  private readonly positions: ReadonlyMap<string, number>;
  /**
   * The distinct keys, in the order of their first occurrence, for the walks over the keys by
   * prefix (about ten per span: indexed messages, metadata and parameter namespaces). An array is
   * walked faster than a Map's key iterator: ~170 → ~115 ns per walk over a Vercel model call's 24 keys.
   */
  readonly keys: readonly string[];

  constructor(attributes: readonly Attribute[]) {
    const layout = layoutOf(attributes);
    this.attributes = attributes;
    this.layout = layout;
    this.positions = layout.positions;
    this.keys = layout.keys;
  }

  has(key: string): boolean {
    return this.positions.has(key);
  }

  value(key: string): AnyValue | undefined {
    const position = this.positions.get(key);
    return position === undefined ? undefined : this.attributes[position]!.value;
  }

  /** The value at a position of the list (as `IndexedGroup.position` gives), or undefined for -1. */
  valueAt(position: number): AnyValue | undefined {
    return position < 0 ? undefined : this.attributes[position]!.value;
  }

  /** A non-empty string value at a position, as `string`. */
  stringAt(position: number): string | undefined {
    const value = this.valueAt(position);
    return value?.type === 'string' && value.value !== '' ? value.value : undefined;
  }

  /** The value at a position as plain JSON (see `toJson`). */
  jsonAt(position: number): unknown {
    const value = this.valueAt(position);
    return value === undefined ? undefined : toJson(value);
  }

  /** A non-empty string value. */
  string(key: string): string | undefined {
    const value = this.value(key);
    return value?.type === 'string' && value.value !== '' ? value.value : undefined;
  }

  /** The value of the first key of the list that holds a non-empty string. */
  firstString(list: KeyList): string | undefined {
    const positions = this.layout.positionsOf(list);
    for (let i = 0; i < positions.length; i++) {
      const found = this.stringAt(positions[i]!);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Whether any key of the list is present. */
  hasAny(list: KeyList): boolean {
    return this.layout.positionsOf(list).length > 0;
  }

  /** A finite number from an int, a double or a numeric string. */
  number(key: string): number | undefined {
    return numberOf(this.value(key));
  }

  /** The value of the first key of the list that holds a number (see `number`). */
  firstNumber(list: KeyList): number | undefined {
    const positions = this.layout.positionsOf(list);
    for (let i = 0; i < positions.length; i++) {
      const found = numberOf(this.valueAt(positions[i]!));
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** A boolean, also from the strings `true` / `false` (SDKs that only emit strings). */
  bool(key: string): boolean | undefined {
    const value = this.value(key);
    if (value?.type === 'bool') return value.value;
    if (value?.type === 'string') {
      const lower = value.value.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
    }
    return undefined;
  }

  /** The value as plain JSON (see `toJson`). */
  json(key: string): unknown {
    const value = this.value(key);
    return value === undefined ? undefined : toJson(value);
  }

  /** Whether any key starts with `prefix`. */
  hasKeyWithPrefix(prefix: string): boolean {
    const { keys } = this;
    for (let i = 0; i < keys.length; i++) if (keys[i]!.startsWith(prefix)) return true;
    return false;
  }

  /**
   * The attributes `prefix` + `N` + `.rest`, grouped by N (ascending): what the indexed conventions
   * (`gen_ai.prompt.N.role`, `llm.input_messages.N.message.content`) spread over many keys, in one
   * pass over them. Undefined when an index is not written plainly (see `IndexedGroup`). The groups
   * hold positions in the list, not values, so that they depend on the keys alone and can be
   * `derived` once per layout.
   */
  groupsByIndex(prefix: string): IndexedGroup[] | undefined {
    let groups: IndexedGroup[] | undefined;
    const { keys, positions } = this;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!key.startsWith(prefix)) continue;
      const added = addToGroup((groups ??= []), key, prefix.length, positions.get(key)!);
      if (!added) return undefined;
    }
    return groups === undefined ? [] : sortedGroups(groups);
  }

  /**
   * What `derive` makes of this map's keys, made once per layout and shared by the lists of that
   * layout: `derive` must read the keys only (`keys`, `has`, `groupsByIndex`, `namespace`), never
   * a value, and `key` names what is derived (one deriving function per key).
   */
  derived<T>(key: string, derive: (attributes: AttributeMap, key: string) => T): T {
    return this.layout.derived(key, derive, this);
  }

  /**
   * The keys under the namespace `prefix` (`gen_ai.request.`, `langsmith.metadata.`) and the names
   * after it, found once per layout and shared by its spans (read-only): a span's parameters and
   * metadata were a walk over its keys and a new string per name (`key.slice`), which an object
   * then had to look up in V8's string table as a property name, per span and namespace. For
   * constant prefixes only: each is remembered per layout.
   */
  namespace(prefix: string): Namespace {
    return this.layout.namespace(prefix);
  }

  /** Keys that start with `prefix`, in attribute order. */
  keysWithPrefix(prefix: string): string[] {
    // Called about ten times per span (message indices, metadata and parameter namespaces), so it
    // walks the keys without first copying them into an array: 0.53 – 0.79 → 0.45 – 0.56 µs per
    // span for those calls on a 7-attribute span.
    const found: string[] = [];
    const { keys } = this;
    for (let i = 0; i < keys.length; i++) if (keys[i]!.startsWith(prefix)) found.push(keys[i]!);
    return found;
  }
}

/**
 * The attributes of one index N of an indexed convention, by what follows `prefix.N.` in their key
 * (`role`, `message.content`, `tool_calls.0.id`): the fields of one message or one tool call, as
 * the positions of their values in the attribute list.
 *
 * Kept as parallel lists and searched linearly: a group holds a few keys, and finding a field
 * compares the tail of a key already decoded, where building `prefix.N.field` for a Map lookup
 * made (and hashed) a new string per field, and finding the indices took a pass over every
 * attribute per index. For a model call of five OpenInference or Traceloop messages, ~4 → ~1 µs;
 * the messages' reader now does this once per layout (`AttributeMap.derived`).
 *
 * An index is read only where it is written plainly (decimal digits, no leading zero, at most 15):
 * where a segment in an index position is something else that `Number` would read as an index
 * (`01`, ` 1`, `1e0`, `-0`, an empty segment), `groupsByIndex` gives undefined, and the caller
 * falls back to reading key by key with `Number`, as the translator always did.
 */
export class IndexedGroup {
  readonly keys: string[] = [];
  /** Where the field name starts in each key. */
  readonly starts: number[] = [];
  /** Where each key's value is in the attribute list (see `AttributeMap.valueAt`). */
  readonly positions: number[] = [];

  constructor(readonly index: number) {}

  /** The position of the field's value, or -1 when the group has no such field. */
  position(field: string): number {
    const { keys, starts } = this;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const start = starts[i]!;
      if (key.length - start === field.length && key.startsWith(field, start)) return this.positions[i]!;
    }
    return -1;
  }

  hasFieldWithPrefix(prefix: string): boolean {
    const { keys, starts } = this;
    for (let i = 0; i < keys.length; i++) if (keys[i]!.startsWith(prefix, starts[i])) return true;
    return false;
  }

  /** The fields `prefix` + `M` + `.rest` of this group, grouped by M (nested lists: contents, tool calls). */
  groupsByIndex(prefix: string): IndexedGroup[] | undefined {
    let groups: IndexedGroup[] | undefined;
    const { keys, starts } = this;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const start = starts[i]!;
      if (!key.startsWith(prefix, start)) continue;
      if (!addToGroup((groups ??= []), key, start + prefix.length, this.positions[i]!)) return undefined;
    }
    return groups === undefined ? [] : sortedGroups(groups);
  }
}

/**
 * Adds `key` (whose index segment starts at `at`) to the group of its index; false when that segment
 * is not a plain index but `Number` reads it as one. A key whose segment is no index at all is
 * left out, as is a key that ends at its index (it names the index without a field).
 */
function addToGroup(groups: IndexedGroup[], key: string, at: number, position: number): boolean {
  let end = at;
  let index = 0;
  while (end < key.length) {
    const code = key.charCodeAt(end);
    if (code < 0x30 || code > 0x39) break;
    index = index * 10 + (code - 0x30);
    end++;
  }
  const dot = end === key.length || key.charCodeAt(end) === 0x2e;
  const plain = end > at && dot && (end - at === 1 || key.charCodeAt(at) !== 0x30) && end - at <= 15;
  if (!plain) {
    const segmentEnd = key.indexOf('.', at);
    const number = Number(key.slice(at, segmentEnd < 0 ? key.length : segmentEnd));
    return !(Number.isInteger(number) && number >= 0);
  }
  let group: IndexedGroup | undefined;
  for (const candidate of groups) if (candidate.index === index) group = candidate;
  if (group === undefined) groups.push((group = new IndexedGroup(index)));
  if (end < key.length) {
    group.keys.push(key);
    group.starts.push(end + 1);
    group.positions.push(position);
  }
  return true;
}

function sortedGroups(groups: IndexedGroup[]): IndexedGroup[] {
  return groups.length > 1 ? groups.sort((a, b) => a.index - b.index) : groups;
}

export function numberOf(value: AnyValue | undefined): number | undefined {
  if (!value) return undefined;
  switch (value.type) {
    case 'int':
      return Number(value.value);
    case 'double':
      return Number.isFinite(value.value) ? value.value : undefined;
    case 'string': {
      if (value.value.trim() === '') return undefined;
      const parsed = Number(value.value);
      return Number.isFinite(parsed) ? parsed : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * An AnyValue as plain JSON: arrays as arrays, key-value lists as objects, 64-bit ints as numbers
 * when they fit (as decimal strings otherwise), bytes as base64, non-finite doubles as strings
 * (JSON has no NaN, and one bad number must not make a whole upload unencodable).
 */
export function toJson(value: AnyValue): unknown {
  switch (value.type) {
    case 'string':
    case 'bool':
      return value.value;
    case 'int':
      return value.value >= BigInt(Number.MIN_SAFE_INTEGER) && value.value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(value.value)
        : value.value.toString();
    case 'double':
      return Number.isFinite(value.value) ? value.value : String(value.value);
    case 'bytes':
      return Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength).toString('base64');
    case 'array':
      return value.value.map(toJson);
    case 'kvlist': {
      const object: Record<string, unknown> = {};
      for (const entry of value.value) object[entry.key] = toJson(entry.value);
      return object;
    }
    case 'empty':
      return null;
  }
}

// Characters JSON text can start with (after white space). Checking first avoids a thrown and
// caught SyntaxError for every plain-text value, which dominated translation time.
const JSON_START = /^\s*[{["\-0-9tfn]/;

/** Parses JSON text, or returns undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  if (!JSON_START.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object from an attribute holding JSON text or a key-value list; undefined otherwise. */
export function objectOf(value: AnyValue | undefined): Record<string, unknown> | undefined {
  if (!value) return undefined;
  if (value.type === 'kvlist') return toJson(value) as Record<string, unknown>;
  if (value.type === 'string' && /^\s*\{/.test(value.value)) {
    const parsed = parseJson(value.value);
    return isPlainObject(parsed) ? parsed : undefined;
  }
  return undefined;
}

/** A JSON array from an attribute holding an array or JSON array text; undefined otherwise. */
export function arrayOf(value: AnyValue | undefined): unknown[] | undefined {
  if (!value) return undefined;
  if (value.type === 'array') return value.value.map(toJson);
  if (value.type === 'string' && /^\s*\[/.test(value.value)) {
    const parsed = parseJson(value.value);
    return Array.isArray(parsed) ? parsed : undefined;
  }
  return undefined;
}

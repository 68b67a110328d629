// JSON values that many runs share — the attributes of the resource their spans came from, the tool
// definitions an application sends with every model call — frozen, with their JSON text made once.
// The batch processor sizes every run and the backend exporter serialises it; for the parts runs
// share, both take the text made here instead of walking the same objects run after run.
//
// A shared value is frozen, since every run holding it would see a change: a processor that edits
// runs replaces it with a copy instead of writing into it (docs/writing-a-plugin.md, `mutatesData`).
// A structuredClone of a run (what a fan-out hands a mutating consumer) is plain objects again.

const texts = new WeakMap<object, string>();

/** Freezes `value` (deeply) and records its JSON text; returns `value`. */
export function shareJson<T extends object>(value: T): Readonly<T> {
  if (texts.has(value)) return value;
  const text = JSON.stringify(value) as string | undefined;
  deepFreeze(value);
  if (text !== undefined) texts.set(value, text);
  return value;
}

/** The JSON text of a value made by `shareJson`, or undefined for any other value. */
export function sharedJsonText(value: object): string | undefined {
  return texts.get(value);
}

/**
 * JSON text of `value` as JSON.stringify writes it, except that the members of objects down to
 * `depth` levels are written one by one, so that shared values among them are copied in as text.
 * Objects deeper down, arrays and objects with `toJSON` go to JSON.stringify whole. Returns
 * undefined where JSON.stringify would (a function, a symbol, undefined); throws where it throws (a
 * bigint, a cycle).
 */
export function jsonWithShared(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) as string | undefined;
  const shared = texts.get(value);
  if (shared !== undefined) return shared;
  if (depth === 0 || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.stringify(value);
  }
  const object = value as Record<string, unknown>;
  // Without object members there is nothing shared to copy in: one native call writes it faster
  // than a call per member (a run's metadata, a few strings). A realistic model call's `extra`
  // went from ~1.35 to ~1.22 µs.
  if (!hasObjectMember(object)) return JSON.stringify(object);
  let text = '';
  for (const key of Object.keys(object)) {
    const member = jsonWithShared(object[key], depth - 1);
    if (member === undefined) continue;
    text += (text === '' ? '{' : ',') + quotedKey(key) + member;
  }
  return text === '' ? '{}' : text + '}';
}

function hasObjectMember(object: Record<string, unknown>): boolean {
  for (const key in object) {
    const member = object[key];
    if (typeof member === 'object' && member !== null) return true;
  }
  return false;
}

// Member names as JSON writes them (`"name":`), since the same few names recur in every run;
// bounded, in case a span's attributes bring ever new names.
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (quotedKeys.size >= 1024) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * Parsed JSON texts that spans repeat word for word (an application's tool definitions and system
 * instructions), kept as shared values: a repeat costs a comparison instead of a parse, and its runs
 * share one frozen value with its text. Bounded in entries and in text length; when full it starts
 * over, so a stream of distinct texts costs a parse each, as without it.
 *
 * A text is found among the texts of its length seen before and compared with them, not by a Map
 * keyed by the text: a span's strings are new strings decoded from its request, so such a Map
 * hashes every character on each lookup. For a 418-character system instruction that lookup cost
 * ~790 ns (Node 20), more than parsing it (~480 ns); comparing it with the one text of that length
 * costs ~40 ns. Texts of one length are few (the same tool definitions, the same system prompt), and
 * a comparison of two different texts stops at their first different character.
 */
export class SharedJsonCache {
  private readonly byLength = new Map<number, SharedJsonEntry[]>();
  private entries = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxTextLength: number,
  ) {}

  /** The shared result of `parse(text)`, or undefined when it returns undefined. */
  get<T extends object>(text: string, parse: (text: string) => T | undefined): Readonly<T> | undefined {
    if (text.length > this.maxTextLength) return parse(text);
    let bucket = this.byLength.get(text.length);
    if (bucket !== undefined) {
      for (const entry of bucket) {
        if (entry.text === text) return (entry.value ?? undefined) as Readonly<T> | undefined;
      }
    }
    const parsed = parse(text);
    if (this.entries >= this.maxEntries) {
      this.byLength.clear();
      this.entries = 0;
      bucket = undefined;
    }
    if (bucket === undefined) this.byLength.set(text.length, (bucket = []));
    // A full bucket drops its oldest text: the texts of one length that keep coming stay.
    if (bucket.length >= TEXTS_PER_LENGTH) bucket.shift();
    else this.entries++;
    bucket.push({ text, value: parsed === undefined ? null : shareJson(parsed) });
    return parsed;
  }
}

interface SharedJsonEntry {
  readonly text: string;
  /** The shared value, or null when `parse` gave nothing for the text. */
  readonly value: Readonly<object> | null;
}

/** Texts of one length kept at most: a stream of distinct texts of one length costs as many comparisons. */
const TEXTS_PER_LENGTH = 4;

// Only ever given JSON data whose text was just made, so it has no cycles.
function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const member of Object.values(value)) {
    if (typeof member === 'object' && member !== null) deepFreeze(member);
  }
}

// JSON texts that spans repeat word for word (an application's tool definitions and system
// instructions), parsed once and kept as shared values (src/model/shared-json.ts), as
// `SharedJsonCache` keeps them, but found by the text's length and then compared with the texts of
// that length seen before, instead of by a Map keyed by the text.
//
// Why: a span's strings are new strings decoded from its request, so a Map keyed by the text hashes
// every character of it on each lookup, and then compares it. For a 418-character system
// instruction that lookup cost ~790 ns (Node 20), more than parsing the text (~480 ns); comparing it
// with the one text of the same length costs ~40 ns. Texts of one length are few (the same tool
// definitions, the same system prompt), and a comparison of two different texts stops at their
// first different character.

import { shareJson } from 'tracepipe/plugin';

interface Entry {
  readonly text: string;
  /** The shared value, or null when `parse` gave nothing for the text. */
  readonly value: Readonly<object> | null;
}

/** Texts of one length kept at most: a stream of distinct texts of one length costs as many comparisons. */
const PER_LENGTH = 4;

export class JsonTextCache {
  private readonly byLength = new Map<number, Entry[]>();
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
    if (bucket.length >= PER_LENGTH) bucket.shift();
    else this.entries++;
    bucket.push({ text, value: parsed === undefined ? null : shareJson(parsed) });
    return parsed;
  }
}

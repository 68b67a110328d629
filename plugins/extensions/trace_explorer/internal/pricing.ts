// What a run's tokens cost, and where the price comes from. In order of precedence: the cost the
// app reported itself (`usage_metadata.total_cost`), the prices configured for the model
// (`prices:` of the extension), then the maintained price table of `@pydantic/genai-prices`
// (matched by model name and, when the run names one, provider; at the run's date, since the
// table knows when prices changed). Input, cached input and output tokens are priced separately
// where the price says so; the table also prices prompt-cache writes.

import { readFileSync } from 'node:fs';
import { calcPrice, findProvider } from '@pydantic/genai-prices';

/** Configured prices per model, in a currency per million tokens. */
export type Prices = Readonly<
  Record<string, { readonly input: number; readonly output: number; readonly cache_read?: number }>
>;

/** Token counts to price; `promptTokens` includes the cached input tokens. */
export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** Where a cost figure comes from. */
export interface CostSource {
  /** `reported`: by the app; `configured`: the extension's prices; `price_table`: genai-prices; `mixed`: several. */
  readonly kind: 'reported' | 'configured' | 'price_table' | 'mixed';
  /** For people: "genai-prices 0.1.8: OpenAI gpt-4o-mini", "configured price of gpt-4o-mini", ... */
  readonly label: string;
  /** The date (YYYY-MM-DD) whose prices were applied, for table prices. */
  readonly asOf?: string;
  /** The provider's pricing page, for table prices. */
  readonly url?: string;
}

export interface Quote {
  readonly cost: number;
  readonly source: CostSource;
}

const TABLE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@pydantic/genai-prices')), 'utf8')) as {
    version: string;
  }
).version;

/** The price table's name as the explorer shows it. */
export const PRICE_TABLE = `genai-prices ${TABLE_VERSION}`;

type TableResult = NonNullable<ReturnType<typeof calcPrice>>;

/** Per-million rates the table charges a model on a day, read from the table itself (`rates`). */
interface Rates {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly source: CostSource;
}

/** What the table says of a model on a day: flat rates, prices in tiers, or nothing. */
type TableEntry = Rates | 'tiered' | 'unknown';

export class Pricer {
  // calcPrice takes ~0.25 ms a call here (it matches the model against the table and decomposes
  // the usage), which made a stats answer of 500 (bucket, model) rows spend ~125 ms pricing. A
  // model whose prices are flat (no tiers) costs the same per token whatever the usage, so its
  // rates are read once per model, provider and day — from calcPrice, on a million tokens of each
  // kind — and applied by multiplication; tiered prices always go through calcPrice.
  // A model the table does not know is remembered as such: asking again costs as much as a match.
  private readonly rates = new Map<string, TableEntry>();

  constructor(private readonly configured: Prices) {}

  /**
   * The cost of `usage` on `model` at `time` (RFC 3339): the configured price if there is one,
   * else the table's; undefined when neither knows the model.
   */
  price(model: string, provider: string | undefined, usage: TokenUsage, time: string): Quote | undefined {
    const own = this.configured[model];
    if (own) {
      const cached = Math.min(usage.cacheReadTokens, usage.promptTokens);
      const cost =
        ((usage.promptTokens - cached) * own.input +
          cached * (own.cache_read ?? own.input) +
          usage.completionTokens * own.output) /
        1_000_000;
      return { cost, source: { kind: 'configured', label: `configured price of ${model}` } };
    }
    const day = time.slice(0, 10);
    const entry = this.tableEntry(model, provider, day);
    if (entry === 'unknown') return undefined;
    if (entry !== 'tiered') {
      const cached = Math.min(usage.cacheReadTokens, usage.promptTokens);
      const written = Math.min(usage.cacheWriteTokens, usage.promptTokens - cached);
      const cost =
        ((usage.promptTokens - cached - written) * entry.input +
          cached * entry.cacheRead +
          written * entry.cacheWrite +
          usage.completionTokens * entry.output) /
        1_000_000;
      return { cost, source: entry.source };
    }
    const quoted = this.tableQuote(model, provider, usage, day);
    return quoted ? { cost: quoted.total_price, source: tableSource(quoted, day) } : undefined;
  }

  /** What the table says of a model on a day (remembered per model, provider and day). */
  private tableEntry(model: string, provider: string | undefined, day: string): TableEntry {
    const key = `${model}\n${provider ?? ''}\n${day}`;
    const known = this.rates.get(key);
    if (known !== undefined) return known;
    const million = (cacheRead: number, cacheWrite: number, output: number) =>
      this.tableQuote(
        model,
        provider,
        { promptTokens: 1_000_000, completionTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite },
        day,
      );
    const base = million(0, 0, 0);
    let entry: TableEntry = base ? 'tiered' : 'unknown';
    if (base && !Object.values(base.model_price).some((price) => typeof price === 'object' && price !== null)) {
      const withOutput = million(0, 0, 1_000_000);
      const allRead = million(1_000_000, 0, 0);
      const allWritten = million(0, 1_000_000, 0);
      if (withOutput && allRead && allWritten) {
        entry = {
          input: base.total_price,
          output: withOutput.total_price - base.total_price,
          cacheRead: allRead.total_price,
          cacheWrite: allWritten.total_price,
          source: tableSource(base, day),
        };
      }
    }
    if (this.rates.size > 10_000) this.rates.clear();
    this.rates.set(key, entry);
    return entry;
  }

  private tableQuote(model: string, provider: string | undefined, usage: TokenUsage, day: string) {
    const tokens = {
      input_tokens: usage.promptTokens,
      output_tokens: usage.completionTokens,
      ...(usage.cacheReadTokens > 0 ? { cache_read_tokens: Math.min(usage.cacheReadTokens, usage.promptTokens) } : {}),
      ...(usage.cacheWriteTokens > 0 ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
    };
    const timestamp = new Date(`${day}T00:00:00Z`);
    // A provider name the table knows narrows the match ("azure" prices differ from "openai");
    // one it does not know (a gateway, a custom name) is left out rather than failing the match.
    const providerId = provider && findProvider({ providerId: provider.toLowerCase() })?.id;
    try {
      return (
        (providerId ? calcPrice(tokens, model, { providerId, timestamp }) : null) ??
        calcPrice(tokens, model, { timestamp })
      );
    } catch {
      // The table throws on usage it cannot split (more cached than input tokens, say): no price.
      return null;
    }
  }
}

/** Where a table price comes from: the table's version, the provider and model, the day, the provider's pricing page. */
function tableSource(result: TableResult, day: string): CostSource {
  const url = result.provider.pricing_urls?.[0];
  return {
    kind: 'price_table',
    label: `${PRICE_TABLE}: ${result.provider.name} ${result.model.name ?? result.model.id}`,
    asOf: day,
    ...(url ? { url } : {}),
  };
}

/** The source of a sum of quotes: the one source, or `mixed` naming the kinds. */
export function combinedSource(sources: readonly CostSource[]): CostSource | undefined {
  const first = sources[0];
  if (!first) return undefined;
  const same = sources.every(
    (s) => s.kind === first.kind && s.label === first.label && s.asOf === first.asOf && s.url === first.url,
  );
  if (same) return first;
  const labels = [...new Set(sources.map((s) => s.label))];
  const days = [...new Set(sources.map((s) => s.asOf).filter((d) => d !== undefined))].sort();
  return {
    kind: sources.every((s) => s.kind === first.kind) ? first.kind : 'mixed',
    label: labels.join('; '),
    ...(days.length > 0 ? { asOf: days.at(-1)! } : {}),
  };
}

/** The API's JSON of a source (snake_case, nulls for what is unknown). */
export function sourceBody(source: CostSource | undefined) {
  if (!source) return null;
  return { kind: source.kind, label: source.label, as_of: source.asOf ?? null, url: source.url ?? null };
}

export const REPORTED: CostSource = { kind: 'reported', label: 'reported by the app' };

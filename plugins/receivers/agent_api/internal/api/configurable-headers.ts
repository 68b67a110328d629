// Which request headers reach a run's `config.configurable`. Whatever lands there is stored with
// the run (`kwargs`, agent.sqlite), copied by LangGraph into every checkpoint's metadata
// (checkpoints.sqlite), returned by `GET /threads/{id}/runs`, thread history and state, and sent
// in webhooks — so a credential that got in would be kept at rest and handed to anyone who can
// read runs. The deployment decides with `langgraph.json`'s `http.configurable_headers`
// (`{include, exclude}`, or the `includes`/`excludes` spelling; patterns with `*` as the only
// wildcard, as the LangGraph platform documents it):
//
// 1. a header matching `exclude` never passes (exclude wins over include);
// 2. a header that looks like a credential (`CREDENTIAL_PATTERNS`) never passes either, unless
//    `include` names it exactly, without a wildcard — the deliberate way to pass one;
// 3. otherwise a header passes when it matches `include`, by default `x-*` and `user-agent`
//    (what the reference server copies).

/** A JSON object, as `configurable` is one. */
type JsonObject = Record<string, unknown>;

export interface ConfigurableHeadersConfig {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
}

export const DEFAULT_INCLUDE: readonly string[] = ['x-*', 'user-agent'];

/** Header names that carry credentials, or look like they might. */
export const CREDENTIAL_PATTERNS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  '*key*',
  '*token*',
  '*secret*',
  '*password*',
  '*passwd*',
  '*auth*',
  '*credential*',
  '*session*',
  '*cookie*',
  '*signature*',
  'x-amz-*',
  // Never copied by the reference server either.
  'x-tenant-id',
  'x-service-key',
];

/** A glob with `*` as the only special character, matched against the whole lower-cased name. */
function globToRegExp(pattern: string): RegExp {
  const parts = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}

const matcher = (patterns: readonly string[]) => {
  const compiled = patterns.map(globToRegExp);
  return (name: string) => compiled.some((pattern) => pattern.test(name));
};

export class HeaderFilter {
  private readonly included: (name: string) => boolean;
  private readonly excluded: (name: string) => boolean;
  private readonly credential = matcher(CREDENTIAL_PATTERNS);
  private readonly namedExactly: ReadonlySet<string>;

  constructor(config: ConfigurableHeadersConfig = {}) {
    this.included = matcher(config.include ?? DEFAULT_INCLUDE);
    this.excluded = matcher(config.exclude ?? []);
    this.namedExactly = new Set(
      (config.include ?? []).filter((pattern) => !pattern.includes('*')).map((pattern) => pattern.toLowerCase()),
    );
  }

  /** Whether a header (any case) may be copied into `configurable`. */
  passes(name: string): boolean {
    const key = name.toLowerCase();
    if (this.excluded(key)) return false;
    if (this.credential(key) && !this.namedExactly.has(key)) return false;
    return this.included(key);
  }

  /** The request headers that pass, lower-cased, repeated ones joined with `, `. */
  toConfigurable(headers: Record<string, string | string[] | undefined>): JsonObject {
    const out: JsonObject = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || !this.passes(name)) continue;
      out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    return out;
  }
}

/** `http.configurable_headers` of a langgraph.json, checked; problems name the key. */
export function parseConfigurableHeaders(
  raw: unknown,
  where: string,
): { config?: ConfigurableHeadersConfig; problems: string[] } {
  if (raw === undefined || raw === null) return { problems: [] };
  if (typeof raw !== 'object' || Array.isArray(raw))
    return { problems: [`${where}: must be an object {include, exclude}`] };
  const record = raw as Record<string, unknown>;
  const problems: string[] = [];
  const list = (singular: string, plural: string): string[] | undefined => {
    const value = record[singular] ?? record[plural];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) {
      problems.push(`${where}.${singular}: must be a list of header names or patterns`);
      return undefined;
    }
    return value as string[];
  };
  const include = list('include', 'includes');
  const exclude = list('exclude', 'excludes');
  for (const key of Object.keys(record)) {
    if (!['include', 'includes', 'exclude', 'excludes'].includes(key))
      problems.push(`${where}.${key}: unknown key (include, exclude)`);
  }
  return { config: { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) }, problems };
}

// What a distribution offers: the components a `tracepipe` build can run, each loaded only when a
// config uses it. The OpenTelemetry Collector's builder writes a `components.go` listing its
// factories; a tracepipe distribution is a module listing catalog entries (see the repository's
// `distribution/components.ts`), handed to `runCommandLine()`.
//
// Entries are lazy because a component's module pulls in everything it runs on (the agent server
// loads LangGraph, about half a second): a proxy start should not pay for components it does not
// use. `kind` and `type` are stated in the entry so the CLI knows, without importing anything,
// which entries a config needs; `loadFactories` checks that the loaded factory agrees.

import type { ComponentKind, Factory } from './component.ts';

export interface CatalogEntry {
  readonly kind: ComponentKind;
  readonly type: string;
  /** Imports the component's module and returns its factory. */
  readonly load: () => Promise<Factory>;
  /**
   * The component imports user modules that may be TypeScript (graphs, handlers) with a plain
   * `import()`: the CLI registers the TypeScript loader before creating it. Components that load
   * user code through `importModule()` (tracepipe/plugin) do not need this.
   */
  readonly loadsUserTypeScript?: boolean;
}

export type Catalog = readonly CatalogEntry[];

/** A kind/type pair as a config names it, e.g. `receiver/otlp`. */
export function componentKey(kind: ComponentKind, type: string): string {
  return `${kind}/${type}`;
}

/**
 * Loads the factories of the entries `wanted` selects (all when omitted), in catalog order.
 * Throws when an entry's module returns a factory of another kind or type than the entry says.
 */
export async function loadFactories(catalog: Catalog, wanted?: (entry: CatalogEntry) => boolean): Promise<Factory[]> {
  const entries = catalog.filter((entry) => wanted?.(entry) ?? true);
  return Promise.all(
    entries.map(async (entry) => {
      const factory = await entry.load();
      if (factory?.kind !== entry.kind || factory.type !== entry.type) {
        const got = factory ? componentKey(factory.kind, factory.type) : String(factory);
        throw new Error(`catalog entry ${componentKey(entry.kind, entry.type)} loaded the factory of ${got}`);
      }
      return factory;
    }),
  );
}

/**
 * The kind/type pairs a parsed (not yet validated) config refers to in its `receivers`,
 * `processors`, `exporters` and `extensions` sections: what `loadFactories` needs to load for it.
 */
export function referencedComponents(data: unknown): Set<string> {
  const keys = new Set<string>();
  const sections = {
    receiver: 'receivers',
    processor: 'processors',
    exporter: 'exporters',
    extension: 'extensions',
  } as const;
  if (typeof data !== 'object' || data === null) return keys;
  for (const [kind, section] of Object.entries(sections) as [ComponentKind, string][]) {
    const value = (data as Record<string, unknown>)[section];
    if (typeof value !== 'object' || value === null) continue;
    for (const id of Object.keys(value)) keys.add(componentKey(kind, id.split('/')[0]!));
  }
  return keys;
}

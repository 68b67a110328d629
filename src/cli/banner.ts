// What `tracepipe run` says once everything has started: where every listener answers and what
// for, and what each component wants its operator to know (data directories, graphs, auth). The
// components describe themselves (`Lifecycle.describe`); this module only lays it out — as a short
// banner on a terminal, or as one structured log line otherwise.

import type { Logger } from 'pino';
import type { ComponentDescription, ComponentKind } from '../pipeline/component.ts';

export type Described = { readonly id: string; readonly kind: ComponentKind | 'service' } & ComponentDescription;

export interface BannerOptions {
  readonly version: string;
  readonly configPath: string;
  /** What `--watch` watches, if it is on. */
  readonly watching?: string;
}

/** The banner's text: a heading, then per component its URLs and facts, aligned. */
export function formatBanner(described: readonly Described[], options: BannerOptions): string {
  const rows = described.flatMap((component) => [
    ...(component.endpoints ?? []).map((endpoint) => [endpoint.purpose, endpoint.url] as const),
    ...Object.entries(component.details ?? {}),
  ]);
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  const lines = ['', `  tracepipe ${options.version} is ready (${options.configPath})`, ''];
  for (const component of described) {
    const entries = [
      ...(component.endpoints ?? []).map((endpoint) => [endpoint.purpose, endpoint.url] as const),
      ...Object.entries(component.details ?? {}),
    ];
    if (entries.length === 0) continue;
    lines.push(`  ${component.kind} ${component.id}`);
    for (const [label, value] of entries) lines.push(`    ${label.padEnd(width)}  ${value}`);
  }
  if (options.watching) lines.push('', `  Watching ${options.watching} for changes; edits reload the graphs.`);
  lines.push('', '  Stop with Ctrl+C.', '');
  return `${lines.join('\n')}\n`;
}

/** The same as one log line: `endpoints` (component, purpose, url) and `details` per component. */
export function logReady(logger: Logger, described: readonly Described[], options: BannerOptions): void {
  const endpoints = described.flatMap((component) =>
    (component.endpoints ?? []).map((endpoint) => ({ component: component.id, ...endpoint })),
  );
  const details = Object.fromEntries(
    described.filter((component) => component.details).map((component) => [component.id, component.details]),
  );
  logger.info(
    { config: options.configPath, endpoints, details, ...(options.watching ? { watching: options.watching } : {}) },
    'Listening.',
  );
}

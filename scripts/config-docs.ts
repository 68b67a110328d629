// Keeps generated documentation in step with its sources (as mdatagen does for the Collector):
//   - each component README's config table, from the component's schema, between
//     `<!-- config:start -->` and `<!-- config:end -->` (the built-in components and the example
//     plugins);
//   - README.md's tables of the environment variables of the ready configs (configs/*.yaml), from
//     the configs' `${VAR:-default}` references and the schema descriptions of the keys they set,
//     between `<!-- env:start -->` and `<!-- env:end -->`.
//
//   node --import tsx scripts/config-docs.ts          # rewrite the tables
//   node --import tsx scripts/config-docs.ts --check  # exit 1 if any table is stale

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { components } from '../distribution/components.ts';
import ndjsonFactory from '../examples/ndjson-receiver/index.ts';
import redactFactory from '../examples/redact-processor/index.ts';
import { configTable } from '../src/config/describe.ts';
import { environmentReferences } from '../src/config/expand.ts';
import { topLevelSchema } from '../src/config/schema.ts';
import type { ComponentKind, Factory } from '../src/pipeline/component.ts';
import { loadFactories } from '../src/pipeline/catalog.ts';

const START = '<!-- config:start -->';
const END = '<!-- config:end -->';

export function readmePath(factory: Factory): string {
  if (factory === redactFactory)
    return fileURLToPath(new URL('../examples/redact-processor/README.md', import.meta.url));
  if (factory === ndjsonFactory)
    return fileURLToPath(new URL('../examples/ndjson-receiver/README.md', import.meta.url));
  return fileURLToPath(new URL(`../plugins/${factory.kind}s/${factory.type}/README.md`, import.meta.url));
}

/** Every factory whose README carries a config table: the built-in ones and the example plugins. */
export async function documentedFactories(): Promise<Factory[]> {
  return [...(await loadFactories(components)), redactFactory, ndjsonFactory];
}

const ENV_START = '<!-- env:start -->';
const ENV_END = '<!-- env:end -->';
export const ROOT_README = fileURLToPath(new URL('../README.md', import.meta.url));
const CONFIGS_DIR = fileURLToPath(new URL('../configs/', import.meta.url));

interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
}

/** The schema description of a config key path such as `receivers.otlp.journal.directory`. */
function describeKey(path: string, factories: readonly Factory[]): string {
  const parts = path.split('.');
  let node: SchemaNode | undefined;
  let rest: string[];
  const kinds: Record<string, ComponentKind> = {
    receivers: 'receiver',
    processors: 'processor',
    exporters: 'exporter',
    extensions: 'extension',
  };
  if (kinds[parts[0]!]) {
    const type = parts[1]!.split('/')[0];
    node = factories.find((factory) => factory.kind === kinds[parts[0]!] && factory.type === type)
      ?.configSchema as SchemaNode;
    rest = parts.slice(2);
  } else {
    node = topLevelSchema as unknown as SchemaNode;
    rest = parts;
  }
  for (const part of rest) node = node?.properties?.[part];
  return node?.description?.replace(/\|/g, '\\|') ?? '';
}

/** The Markdown table of one config's environment variables. */
export function envTable(configText: string, factories: readonly Factory[]): string {
  const document = parseDocument(configText);
  const byName = new Map<string, { path: string; fallback?: string; value: string }[]>();
  for (const reference of environmentReferences(document)) {
    const value = String(document.getIn(reference.path.split('.'), true) ?? '');
    const uses = byName.get(reference.name) ?? [];
    if (!uses.some((use) => use.path === reference.path))
      uses.push({ path: reference.path, fallback: reference.fallback, value });
    byName.set(reference.name, uses);
  }
  const lines = ['| Variable | Default | Sets | Meaning (of the key it sets) |', '|---|---|---|---|'];
  for (const [name, uses] of byName) {
    const defaults = [
      ...new Set(
        uses.map((use) =>
          use.fallback === undefined ? 'required' : use.fallback === '' ? 'empty' : `\`${use.fallback}\``,
        ),
      ),
    ];
    const sets = uses.map((use) => {
      const whole = /^\$\{(?:env:)?\w+(?::-[^}]*)?\}$/.test(use.value);
      return whole
        ? `\`${use.path}\``
        : `\`${use.path}\` = \`${use.value.replace(/\$\{(?:env:)?(\w+)(?::-[^}]*)?\}/g, '$$$1')}\``;
    });
    const meanings = [...new Set(uses.map((use) => describeKey(use.path, factories)).filter(Boolean))];
    lines.push(`| \`${name}\` | ${defaults.join(', ')} | ${sets.join('<br>')} | ${meanings.join(' ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** The ready configs, by file name. */
export function readyConfigs(): { name: string; text: string }[] {
  return readdirSync(CONFIGS_DIR)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => ({ name, text: readFileSync(`${CONFIGS_DIR}${name}`, 'utf8') }));
}

/** README.md with its environment-variable tables regenerated, or an error when it has no markers. */
export function renderEnvSection(readme: string, factories: readonly Factory[]): string | Error {
  const start = readme.indexOf(ENV_START);
  const end = readme.indexOf(ENV_END);
  if (start < 0 || end < start) return new Error(`has no ${ENV_START} … ${ENV_END} section`);
  const tables = readyConfigs().map(({ name, text }) => `#### \`configs/${name}\`\n\n${envTable(text, factories)}`);
  return `${readme.slice(0, start + ENV_START.length)}\n${tables.join('\n')}${readme.slice(end)}`;
}

/** The README text with its table regenerated, or an error message when it has no markers. */
export function renderReadme(text: string, factory: Factory): string | Error {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return new Error(`has no ${START} … ${END} section`);
  return `${text.slice(0, start + START.length)}\n${configTable(factory.configSchema)}${text.slice(end)}`;
}

async function main(check: boolean): Promise<number> {
  let failures = 0;
  const factories = await documentedFactories();
  const readme = readFileSync(ROOT_README, 'utf8');
  const withEnv = renderEnvSection(readme, factories);
  if (withEnv instanceof Error) {
    console.error(`${ROOT_README}: ${withEnv.message}`);
    failures++;
  } else if (withEnv !== readme) {
    if (check) {
      console.error(`${ROOT_README}: environment-variable tables are stale; run scripts/config-docs.ts`);
      failures++;
    } else {
      writeFileSync(ROOT_README, withEnv);
      console.log(`updated ${ROOT_README}`);
    }
  }
  for (const factory of factories) {
    const path = readmePath(factory);
    const text = readFileSync(path, 'utf8');
    const rendered = renderReadme(text, factory);
    if (rendered instanceof Error) {
      console.error(`${path}: ${rendered.message}`);
      failures++;
    } else if (rendered !== text) {
      if (check) {
        console.error(`${path}: config table is stale; run scripts/config-docs.ts`);
        failures++;
      } else {
        writeFileSync(path, rendered);
        console.log(`updated ${path}`);
      }
    }
  }
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(await main(process.argv.includes('--check')));

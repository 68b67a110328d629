// Static schema extraction: JSON Schemas of graphs built without a runtime schema (`Annotation`
// state), read from their TypeScript types. One TypeScript program holds every graph asked for,
// so the libraries' declarations (`@langchain/core` above all, most of the cost) are read and
// checked once for the whole deployment. Each graph file is read with a few type aliases appended
// (`typeof` its export and of its subgraph candidates), and a module beside it (./reflect.ts) maps
// those types to plain object types that typescript-json-schema turns into JSON Schema, with the
// same settings, names and shapes as the LangGraph API server's own extraction.
//
// This module is heavy (it loads the TypeScript compiler): it runs in a worker (./worker.ts).

import { readFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import ts from 'typescript';
import * as TJS from 'typescript-json-schema';
import { REFLECT_HELPERS } from './reflect.ts';
import { fileHash, isTypeScriptModule } from './source-files.ts';
import { exportedBinding, findSubgraphCandidates } from './subgraph-sites.ts';

export interface TypeSchemaTarget {
  readonly graphId: string;
  /** Absolute path of the graph's module. */
  readonly path: string;
  readonly exportName: string;
}

export interface TypeSchemas {
  readonly state: unknown;
  readonly input: unknown;
  readonly output: unknown;
  readonly config: unknown;
}

/** One graph's schemas: its own under `''`, its subgraphs' under their namespace (`a`, `a|b`). */
export type GraphTypeSchemas = Record<string, TypeSchemas>;

/** The project's files a graph's types were read from (outside `node_modules`): path → content hash. */
export type SourceHashes = Record<string, string>;

export type ExtractionResult =
  | { readonly graphId: string; readonly schemas: GraphTypeSchemas; readonly files: SourceHashes }
  | { readonly graphId: string; readonly error: string };

// As the LangGraph API server sets typescript-json-schema up: its defaults, type errors ignored.
const GENERATOR_SETTINGS: TJS.PartialArgs = { ignoreErrors: true, ref: true, required: false, titles: false };

interface PlannedGraph {
  readonly target: TypeSchemaTarget;
  /** Alias prefix of this graph's types, unique in the program. */
  readonly prefix: string;
  /** Root first, then the subgraph candidates: alias index → namespace. */
  readonly entries: { readonly alias: string; readonly namespace: string; readonly parent?: string }[];
  readonly reflectFile: string;
}

/**
 * Extracts the schemas of `targets`, calling `onGraph` once per target as soon as its schemas are
 * known (in order). A graph that cannot be read (not TypeScript, no such export, types that do
 * not describe a graph) gets an `error` naming why; the others are not affected.
 */
export function extractTypeSchemas(
  targets: readonly TypeSchemaTarget[],
  onGraph: (result: ExtractionResult) => void,
): void {
  const planned: PlannedGraph[] = [];
  const augmented = new Map<string, string>();
  targets.forEach((target, index) => {
    if (!isTypeScriptModule(target.path)) {
      onGraph({ graphId: target.graphId, error: 'not a TypeScript module' });
      return;
    }
    let text: string;
    try {
      text = augmented.get(target.path) ?? readFileSync(target.path, 'utf8');
    } catch (error) {
      onGraph({ graphId: target.graphId, error: `cannot read ${target.path}: ${(error as Error).message}` });
      return;
    }
    const source = ts.createSourceFile(target.path, text, ts.ScriptTarget.Latest, true);
    const binding = exportedBinding(source, target.exportName);
    if (!binding) {
      onGraph({
        graphId: target.graphId,
        error: `export "${target.exportName}" is not a variable or function of the file`,
      });
      return;
    }
    const prefix = `__tracepipe_graph_${index}`;
    const candidates = findSubgraphCandidates(source, target.exportName);
    const entries = [
      { alias: `${prefix}_root`, variable: binding, namespace: '', parent: undefined },
      ...candidates.map((candidate, at) => ({
        alias: `${prefix}_${at}`,
        variable: candidate.variable,
        namespace: candidate.namespace.join('|'),
        parent: candidate.namespace.slice(0, -1).join('|'),
      })),
    ];
    const appended = entries.map(({ alias, variable }) => `export type ${alias} = typeof ${variable};`).join('\n');
    augmented.set(target.path, `${text}\n${appended}\n`);
    const reflectFile = join(dirname(target.path), `${prefix}__schema${extname(target.path).replace('x', '')}`);
    planned.push({ target, prefix, entries, reflectFile });
  });
  if (planned.length === 0) return;

  const virtual = new Map<string, string>(augmented);
  for (const graph of planned) virtual.set(graph.reflectFile, reflectModule(graph));

  const options = compilerOptions(dirname(planned[0]!.target.path));
  const host = ts.createCompilerHost(options);
  const realRead = host.readFile.bind(host);
  const realExists = host.fileExists.bind(host);
  host.readFile = (fileName) => virtual.get(resolve(fileName)) ?? realRead(fileName);
  host.fileExists = (fileName) => virtual.has(resolve(fileName)) || realExists(fileName);
  const realGetSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = virtual.get(resolve(fileName));
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true);
    return realGetSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  const program = ts.createProgram({ rootNames: planned.map((graph) => graph.reflectFile), options, host });
  const checker = program.getTypeChecker();
  const generator = TJS.buildGenerator(program, GENERATOR_SETTINGS);
  if (!generator) throw new Error('typescript-json-schema could not read the program');

  for (const graph of planned) {
    const result = schemasOfGraph(graph, program, checker, generator);
    onGraph('schemas' in result ? { ...result, files: localSources(graph.target.path, options, host) } : result);
  }
}

/**
 * The graph module and the project files it imports, transitively (what a change of the graph's
 * types can come from, beside the packages): resolved as the program resolved them, each with the
 * hash of its content on disk. Packages (`node_modules`) are left out; the cache keys on the
 * lock file for them.
 */
function localSources(root: string, options: ts.CompilerOptions, host: ts.CompilerHost): SourceHashes {
  const files: SourceHashes = {};
  const queue = [resolve(root)];
  const seen = new Set(queue);
  const visit = (path: string | undefined) => {
    if (path === undefined || seen.has(path) || path.split(sep).includes('node_modules')) return;
    seen.add(path);
    queue.push(path);
  };
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    const hash = fileHash(path);
    if (hash === undefined) continue;
    files[path] = hash;
    const imports = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
    for (const { fileName } of imports.importedFiles) {
      const resolved = ts.resolveModuleName(fileName, path, options, host).resolvedModule;
      if (resolved && !resolved.isExternalLibraryImport) visit(resolve(resolved.resolvedFileName));
    }
    for (const { fileName } of imports.referencedFiles) visit(resolve(dirname(path), fileName));
  }
  return files;
}

function reflectModule(graph: PlannedGraph): string {
  const specifier = `./${basename(graph.target.path)}`;
  const aliases = graph.entries.map((entry) => entry.alias);
  const lines = [`import type { ${aliases.join(', ')} } from '${specifier}';`, REFLECT_HELPERS];
  for (const alias of aliases) {
    lines.push(
      `export type ${alias}__isGraph = IsGraph<${alias}>;`,
      `export type ${alias}__state = UpdateOf<${alias}>;`,
      `export type ${alias}__input = InputOf<${alias}>;`,
      `export type ${alias}__output = OutputOf<${alias}>;`,
      `export type ${alias}__config = ConfigOf<${alias}>;`,
    );
  }
  return lines.join('\n');
}

function schemasOfGraph(
  graph: PlannedGraph,
  program: ts.Program,
  checker: ts.TypeChecker,
  generator: TJS.JsonSchemaGenerator,
):
  | { readonly graphId: string; readonly schemas: GraphTypeSchemas }
  | { readonly graphId: string; readonly error: string } {
  const { graphId } = graph.target;
  const reflect = program.getSourceFile(graph.reflectFile);
  if (!reflect) return { graphId, error: 'the TypeScript program did not load the graph module' };
  const exported = new Map(
    checker.getExportsOfModule(checker.getSymbolAtLocation(reflect)!).map((symbol) => [symbol.name, symbol]),
  );
  const isGraph = (alias: string) => {
    const symbol = exported.get(`${alias}__isGraph`);
    if (!symbol) return false;
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    return checker.typeToString(type) === 'true';
  };

  const [root, ...candidates] = graph.entries;
  if (!root || !isGraph(root.alias)) {
    return { graphId, error: `the type of export "${graph.target.exportName}" is not a graph` };
  }
  const schemas: GraphTypeSchemas = { '': schemasOf(generator, root.alias) };
  for (const candidate of candidates) {
    if (candidate.namespace in schemas) continue; // the first graph found for a node wins
    if (!(candidate.parent! in schemas) || !isGraph(candidate.alias)) continue;
    schemas[candidate.namespace] = schemasOf(generator, candidate.alias);
  }
  return { graphId, schemas };
}

function schemasOf(generator: TJS.JsonSchemaGenerator, alias: string): TypeSchemas {
  return {
    state: schemaOf(generator, `${alias}__state`),
    input: schemaOf(generator, `${alias}__input`),
    output: schemaOf(generator, `${alias}__output`),
    config: schemaOf(generator, `${alias}__config`),
  };
}

function schemaOf(generator: TJS.JsonSchemaGenerator, symbol: string): unknown {
  let schema: TJS.Definition;
  try {
    schema = generator.getSchemaForSymbol(symbol);
  } catch {
    return null;
  }
  return withPlainNames(schema);
}

/**
 * The generator's names and references in the form LangGraph clients read them: definition names
 * without the module qualifiers of types reached through another module (unless two
 * definitions would then share a name), and `$ref`s unescaped (`#/definitions/BaseMessage<…>`,
 * where typescript-json-schema writes `%3C…%3E`).
 */
function withPlainNames(schema: TJS.Definition): unknown {
  const definitions = schema.definitions ?? {};
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of Object.keys(definitions)) {
    const plain = name.replace(IMPORT_QUALIFIER, '');
    const chosen = taken.has(plain) ? name : plain;
    taken.add(chosen);
    names.set(name, chosen);
  }
  const text = JSON.stringify(schema, (key, value: unknown) => {
    if (key === 'definitions' && value === schema.definitions) {
      return Object.fromEntries(Object.entries(definitions).map(([name, definition]) => [names.get(name), definition]));
    }
    if (key === '$ref' && typeof value === 'string' && value.startsWith(DEFINITIONS)) {
      const name = decodeURIComponent(value.slice(DEFINITIONS.length));
      return DEFINITIONS + (names.get(name) ?? name.replace(IMPORT_QUALIFIER, ''));
    }
    return value;
  });
  return JSON.parse(text) as unknown;
}

const DEFINITIONS = '#/definitions/';
/** The module qualifier of a type's printed name: `import(<path>).`, with or without attributes. */
const IMPORT_QUALIFIER = /import\("[^"]*"(?:,\s*\{[^()]*\})?\)\./g;

/**
 * The project's own `tsconfig.json` (found from the graphs' directory up) when it has one, with
 * what extraction needs on top. Modules resolve as a bundler resolves them, which is how tsx loads
 * the graphs (package `exports`, extensionless and `.ts` relative imports).
 */
function compilerOptions(directory: string): ts.CompilerOptions {
  const required: ts.CompilerOptions = {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    allowJs: true,
  };
  const configPath = ts.findConfigFile(directory, ts.sys.fileExists, 'tsconfig.json');
  if (configPath) {
    const config = ts.readConfigFile(configPath, ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config ?? {}, ts.sys, dirname(configPath));
    return { target: ts.ScriptTarget.ES2022, ...parsed.options, ...required };
  }
  return { target: ts.ScriptTarget.ES2022, ...required };
}

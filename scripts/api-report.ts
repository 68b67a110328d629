// The public API report: every declaration the package's entry points export — and every
// declaration those reach that is not exported itself — as tsc emits them in .d.ts files, printed
// without comments, one section per entry point. The report is checked in (api/tracepipe.api.md);
// test/api-report.test.ts fails when the declarations differ from it, so that the public surface
// changes only on purpose: after such a change, regenerate the report and review its diff.
//
//   node --import tsx scripts/api-report.ts          # rewrite api/tracepipe.api.md
//   node --import tsx scripts/api-report.ts --check  # exit 1 when it is stale

import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
export const REPORT_PATH = join(root, 'api/tracepipe.api.md');

/** The entry points, as package.json's `exports` names them (without the `tracepipe-source` condition). */
export function entryPoints(): { name: string; source: string }[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => ({
      name: subpath === '.' ? 'tracepipe' : `tracepipe/${subpath.slice(2)}`,
      source: join(root, (target as Record<string, string>)['tracepipe-source']!),
    }));
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.build.json');
  const { config } = ts.readConfigFile(configPath, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configPath);
  return {
    ...options,
    declaration: true,
    emitDeclarationOnly: true,
    noEmit: false,
    incremental: false,
    outDir: join(root, '.api'),
  };
}

/** Emits the declarations of the entry points' program into memory: path → text. */
function emitDeclarations(sources: readonly string[], options: ts.CompilerOptions): Map<string, string> {
  // Type errors are `npm run typecheck`'s business (over the whole project, where module
  // augmentations such as @fastify/swagger's are in scope); here only what blocks emitting counts.
  const program = ts.createProgram(sources, options);
  const files = new Map<string, string>();
  const { diagnostics } = program.emit(undefined, (fileName, text) => files.set(fileName, text), undefined, true);
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => root,
        getNewLine: () => '\n',
      }),
    );
  }
  return files;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** The declaration as the public sees it: without comments, `export`/`declare` and bodies. */
function printDeclaration(node: ts.Node, file: ts.SourceFile): string {
  let text = printer.printNode(ts.EmitHint.Unspecified, node, file);
  text = text.replace(/^export (default )?/, '').replace(/^declare /, '');
  // Private members are emitted by name only and are nobody else's business.
  text = text.replace(/^\s+(?:private [^;\n]*|#private);\n/gm, '');
  return text.trim();
}

/** The node whose text a declaration is printed from (a whole variable statement, not its name). */
function statementOf(declaration: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(declaration)) return declaration.parent.parent;
  return declaration;
}

export function renderReport(): string {
  const entries = entryPoints();
  const options = compilerOptions();
  const emitted = emitDeclarations(
    entries.map((entry) => entry.source),
    options,
  );
  const outDir = options.outDir!;

  // A program over the emitted declarations, reading everything else (node_modules) from disk.
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (fileName) => emitted.get(fileName) ?? readFile(fileName);
  host.fileExists = (fileName) => emitted.has(fileName) || fileExists(fileName);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (dir) =>
    [...emitted.keys()].some((file) => file.startsWith(`${dir}/`)) || (directoryExists?.(dir) ?? true);
  const declarationOf = (source: string) => join(outDir, relative(root, source)).replace(/\.ts$/, '.d.ts');
  const program = ts.createProgram(
    entries.map((entry) => declarationOf(entry.source)),
    { ...options, noEmit: true },
    host,
  );
  const checker = program.getTypeChecker();
  const isOurs = (file: ts.SourceFile) => emitted.has(file.fileName);
  const where = (file: ts.SourceFile) => relative(outDir, file.fileName).replace(/\.d\.ts$/, '.ts');

  const exported = new Set<ts.Symbol>();
  const sections: string[] = [];
  const pending: ts.Symbol[] = [];
  for (const entry of entries) {
    const file = program.getSourceFile(declarationOf(entry.source))!;
    const moduleSymbol = checker.getSymbolAtLocation(file)!;
    const lines: string[] = [];
    for (const symbol of [...checker.getExportsOfModule(moduleSymbol)].sort((a, b) => a.name.localeCompare(b.name))) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      exported.add(target);
      pending.push(target);
      for (const declaration of target.declarations ?? []) {
        const source = declaration.getSourceFile();
        const printed = printDeclaration(statementOf(declaration), source);
        lines.push(target.name === symbol.name ? printed : `${printed}\n// exported as ${symbol.name}`);
      }
    }
    sections.push(`## ${entry.name}\n\n\`\`\`ts\n${lines.join('\n\n')}\n\`\`\``);
  }

  // Declarations the exported ones refer to (parameter, property and return types, base classes),
  // followed transitively: changing them changes the public API as much as changing an export does.
  const referenced = new Map<string, string>();
  const seen = new Set<ts.Symbol>(pending);
  const visitTypes = (node: ts.Node) => {
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node) || ts.isTypeQueryNode(node)) {
      const name = ts.isTypeReferenceNode(node)
        ? node.typeName
        : ts.isTypeQueryNode(node)
          ? node.exprName
          : node.expression;
      let symbol = checker.getSymbolAtLocation(name);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (symbol && !seen.has(symbol) && (symbol.declarations ?? []).some((d) => isOurs(d.getSourceFile()))) {
        seen.add(symbol);
        pending.push(symbol);
      }
    }
    ts.forEachChild(node, visitTypes);
  };
  while (pending.length > 0) {
    const symbol = pending.shift()!;
    for (const declaration of symbol.declarations ?? []) {
      const source = declaration.getSourceFile();
      if (!isOurs(source)) continue;
      visitTypes(statementOf(declaration));
      if (!exported.has(symbol) && !ts.isTypeParameterDeclaration(declaration)) {
        referenced.set(
          `${where(source)} ${symbol.name}`,
          `// ${where(source)}\n${printDeclaration(statementOf(declaration), source)}`,
        );
      }
    }
  }
  const internal = [...referenced.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, text]) => text);
  sections.push(
    `## Referenced by the API, not exported\n\nTypes of the exports above that users cannot import by name but depend on all the same.\n\n\`\`\`ts\n${internal.join('\n\n')}\n\`\`\``,
  );

  return `# tracepipe public API

<!-- Generated by \`npm run api-report\` (scripts/api-report.ts); do not edit. -->

What the package's entry points export, as the declarations tsc emits for them (comments left
out). \`test/api-report.test.ts\` fails when the declarations differ from this file: a change to the
public API is made on purpose, by regenerating this file and reviewing its diff (a removal or an
incompatible change needs a new major version).

${sections.join('\n\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = renderReport();
  if (process.argv.includes('--check')) {
    const current = readFileSync(REPORT_PATH, 'utf8');
    if (current !== report) {
      console.error(`${relative(root, REPORT_PATH)} is stale: run \`npm run api-report\` and review the diff`);
      process.exit(1);
    }
  } else {
    writeFileSync(REPORT_PATH, report);
    console.log(`wrote ${relative(root, REPORT_PATH)}`);
  }
}

// Where a graph file builds its subgraphs, read from its syntax alone: the `addNode(name, value)`
// calls that make up a graph export, and the variables (declared in the file, or imported) that
// each node's value mentions. Which of them really are graphs is for the type checker to say
// (./extract.ts); this only proposes candidates, so that all of them can be named in the one
// program the checker builds.

import ts from 'typescript';

/** A variable that may hold the graph found at `namespace` (node names from the root graph). */
export interface SubgraphCandidate {
  readonly namespace: readonly string[];
  readonly variable: string;
}

/** Graphs nest rarely more than a few levels; the bound keeps a cyclic file from looping. */
const MAX_DEPTH = 8;

/**
 * The file's own name for the export: `graph` for `export const graph`, `local` for
 * `export { local as graph }` or `export default local`; undefined when the export is no binding
 * of the file (`export default <expression>`, a re-export).
 */
export function exportedBinding(source: ts.SourceFile, exportName: string): string | undefined {
  const local = exportedLocalName(source, exportName);
  return local && topLevelDeclarations(source).has(local) ? local : undefined;
}

export function findSubgraphCandidates(source: ts.SourceFile, exportName: string): SubgraphCandidate[] {
  const declarations = topLevelDeclarations(source);
  const candidates: SubgraphCandidate[] = [];
  const visit = (variable: string, namespace: readonly string[], seen: ReadonlySet<string>) => {
    if (namespace.length > MAX_DEPTH) return;
    for (const { node, value } of addNodeCalls(buildingCode(source, declarations, variable, seen))) {
      for (const mentioned of mentionedBindings(value, declarations)) {
        candidates.push({ namespace: [...namespace, node], variable: mentioned });
        if (!seen.has(mentioned)) visit(mentioned, [...namespace, node], new Set([...seen, mentioned]));
      }
    }
  };
  const local = exportedLocalName(source, exportName);
  if (local) visit(local, [], new Set([local]));
  return candidates;
}

interface Binding {
  /** The initializer (or the function) that builds the variable; absent for imports. */
  readonly code?: ts.Node;
}

/** Variables, functions and imported names declared at the top of the file. */
function topLevelDeclarations(source: ts.SourceFile): Map<string, Binding> {
  const bindings = new Map<string, Binding>();
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) bindings.set(declaration.name.text, { code: declaration.initializer });
      }
    } else if (ts.isFunctionDeclaration(statement) && statement.name) {
      bindings.set(statement.name.text, { code: statement });
    } else if (ts.isImportDeclaration(statement) && statement.importClause && !statement.importClause.isTypeOnly) {
      const clause = statement.importClause;
      if (clause.name) bindings.set(clause.name.text, {});
      if (clause.namedBindings && ts.isNamedImports(clause.namedBindings)) {
        for (const element of clause.namedBindings.elements)
          if (!element.isTypeOnly) bindings.set(element.name.text, {});
      }
    }
  }
  return bindings;
}

/** The local name behind `export const name`, `export function name`, `export { local as name }` or `export default local`. */
function exportedLocalName(source: ts.SourceFile, exportName: string): string | undefined {
  for (const statement of source.statements) {
    if (exportName === 'default' && ts.isExportAssignment(statement) && !statement.isExportEquals) {
      return ts.isIdentifier(statement.expression) ? statement.expression.text : undefined;
    }
    if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause) {
      if (!ts.isNamedExports(statement.exportClause)) continue;
      for (const element of statement.exportClause.elements) {
        if (element.name.text === exportName) return (element.propertyName ?? element.name).text;
      }
    }
  }
  return exportName === 'default' ? undefined : exportName;
}

/**
 * The code that builds `variable`: its initializer, and the top-level statements that call a
 * method on it (`workflow.addNode(...)` written as statements of their own). When that code adds
 * no node itself (`export const graph = workflow.compile()`), the local variables it mentions
 * are followed instead.
 */
function buildingCode(
  source: ts.SourceFile,
  declarations: ReadonlyMap<string, Binding>,
  variable: string,
  seen: ReadonlySet<string>,
): ts.Node[] {
  const code: ts.Node[] = [];
  const own = declarations.get(variable)?.code;
  if (own) code.push(own);
  for (const statement of source.statements) {
    if (ts.isExpressionStatement(statement) && receiverName(statement.expression) === variable) code.push(statement);
  }
  if (code.some((node) => addNodeCalls([node]).length > 0)) return code;
  const followed = own ? mentionedBindings(own, declarations).filter((name) => !seen.has(name)) : [];
  return [...code, ...followed.flatMap((name) => buildingCode(source, declarations, name, new Set([...seen, name])))];
}

/** `a` for `a.b(...).c(...)`. */
function receiverName(expression: ts.Expression): string | undefined {
  let current: ts.Expression = expression;
  for (;;) {
    if (ts.isCallExpression(current)) current = current.expression;
    else if (ts.isPropertyAccessExpression(current)) current = current.expression;
    else if (ts.isAwaitExpression(current) || ts.isParenthesizedExpression(current)) current = current.expression;
    else return ts.isIdentifier(current) ? current.text : undefined;
  }
}

function addNodeCalls(roots: readonly ts.Node[]): { node: string; value: ts.Node }[] {
  const calls: { node: string; value: ts.Node }[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'addNode'
    ) {
      const [name, value] = node.arguments;
      if (name && value && ts.isStringLiteralLike(name)) calls.push({ node: name.text, value });
    }
    ts.forEachChild(node, visit);
  };
  for (const root of roots) visit(root);
  return calls;
}

/** Top-level bindings mentioned in `node`, in order of first mention. */
function mentionedBindings(node: ts.Node, declarations: ReadonlyMap<string, Binding>): string[] {
  const names = new Set<string>();
  const visit = (child: ts.Node) => {
    if (ts.isIdentifier(child) && declarations.has(child.text) && !isPropertyName(child)) names.add(child.text);
    ts.forEachChild(child, visit);
  };
  visit(node);
  return [...names];
}

function isPropertyName(identifier: ts.Identifier): boolean {
  const parent = identifier.parent;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === identifier) ||
    (ts.isPropertyAssignment(parent) && parent.name === identifier)
  );
}

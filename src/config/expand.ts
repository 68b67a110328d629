// Environment-variable expansion on YAML scalar nodes (as OTel JS's configuration utils do it):
// `${env:VAR}`, `${VAR}`, `${VAR:-default}`, `${env:VAR:-default}`, and `$$` for a literal `$`.
//
// A plain (unquoted) scalar that is exactly one reference takes the type its value reads as in
// YAML, so `port: ${HTTP_PORT:-4318}` is the number 4318; quoted scalars always stay strings.

import { Scalar, isScalar, visit } from 'yaml';
import type { Document } from 'yaml';

const REFERENCE = /\$\$|\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const SINGLE_REFERENCE = /^\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export interface ExpansionError {
  readonly path: string;
  readonly message: string;
}

/** Expands one string; returns the problems instead of throwing so all can be reported. */
export function expandString(value: string, env: NodeJS.ProcessEnv): { value: string; unset: string[] } {
  const unset: string[] = [];
  const expanded = value.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$$') return '$';
    const current = env[name!];
    if (current !== undefined && current !== '') return current;
    if (fallback !== undefined) return fallback;
    if (current === '') return '';
    unset.push(name!);
    return '';
  });
  return { value: expanded, unset };
}

/** Expands every scalar of the document in place; returns every problem with its YAML path. */
export function expandDocument(document: Document, env: NodeJS.ProcessEnv): ExpansionError[] {
  const errors: ExpansionError[] = [];
  visit(document, {
    Scalar(key, node, path) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('$')) return;
      const yamlPath = pathOf(path, node);
      const original = node.value;
      const { value, unset } = expandString(original, env);
      for (const name of unset) {
        errors.push({ path: yamlPath, message: `environment variable ${name} is not set and has no default` });
      }
      if (value.includes('\n') && !original.includes('\n')) {
        errors.push({ path: yamlPath, message: 'an environment variable expanded to a value containing a newline' });
        return;
      }
      node.value = node.type === Scalar.PLAIN && SINGLE_REFERENCE.test(original) ? typedScalar(value) : value;
    },
  });
  return errors;
}

function typedScalar(text: string): unknown {
  if (/^-?(0|[1-9][0-9]*)$/.test(text)) return Number(text);
  if (/^-?(0|[1-9][0-9]*)?\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null' || text === '~') return null;
  return text;
}

function pathOf(ancestors: readonly unknown[], node: unknown): string {
  const parts: string[] = [];
  let child: unknown = node;
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const ancestor = ancestors[i] as { value?: unknown; key?: unknown; items?: unknown[] };
    if (ancestor && 'key' in (ancestor as object) && ancestor.value === child && isScalar(ancestor.key)) {
      parts.unshift(String(ancestor.key.value));
    } else if (ancestor && Array.isArray(ancestor.items)) {
      const index = ancestor.items.indexOf(child);
      if (index >= 0 && !('key' in ((ancestor.items[index] as object) ?? {}))) parts.unshift(String(index));
    }
    child = ancestor;
  }
  return parts.join('.');
}

/** One `${VAR}` reference in a config: where it is, the variable, and its default if it has one. */
export interface EnvironmentReference {
  /** The YAML path of the value, e.g. `receivers.otlp.port`. */
  readonly path: string;
  readonly name: string;
  /** The text after `:-`, or undefined when the reference has no default. */
  readonly fallback?: string;
}

/** Every environment variable reference of an (unexpanded) document, in document order. */
export function environmentReferences(document: Document): EnvironmentReference[] {
  const references: EnvironmentReference[] = [];
  visit(document, {
    Scalar(key, node, path) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('$')) return;
      const yamlPath = pathOf(path, node);
      for (const match of node.value.matchAll(REFERENCE)) {
        if (match[0] === '$$') continue;
        references.push({ path: yamlPath, name: match[1]!, ...(match[2] === undefined ? {} : { fallback: match[2] }) });
      }
    },
  });
  return references;
}

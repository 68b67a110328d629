// The component registry: built explicitly from a list of factories, rejecting duplicates, with no
// import side effects. Built-in and third-party factories go through the same call.

import { TracepipeError } from '../errors.ts';
import type { ComponentKind, Factory } from './component.ts';
import { COMPONENT_KINDS } from './component.ts';
import { DATA_TYPES } from './data.ts';

const TYPE_PATTERN = /^[a-z][a-z0-9_]*$/;

export class Registry {
  private readonly byKind = new Map<ComponentKind, Map<string, Factory>>(
    COMPONENT_KINDS.map((kind) => [kind, new Map()]),
  );

  constructor(factories: readonly Factory[] = []) {
    for (const factory of factories) this.register(factory);
  }

  /** Adds a factory; throws on a malformed factory or a duplicate kind/type. */
  register(factory: Factory): void {
    const problem = describeInvalidFactory(factory);
    if (problem) throw new TracepipeError('TP_ERR_REGISTRY_INVALID', [describe(factory), problem]);
    const ofKind = this.byKind.get(factory.kind)!;
    if (ofKind.has(factory.type)) {
      throw new TracepipeError('TP_ERR_REGISTRY_DUPLICATE', [factory.kind, factory.type]);
    }
    ofKind.set(factory.type, Object.freeze(factory));
  }

  get(kind: ComponentKind, type: string): Factory | undefined {
    return this.byKind.get(kind)!.get(type);
  }

  types(kind: ComponentKind): string[] {
    return [...this.byKind.get(kind)!.keys()].sort();
  }

  all(): Factory[] {
    return COMPONENT_KINDS.flatMap((kind) => this.types(kind).map((type) => this.byKind.get(kind)!.get(type)!));
  }
}

function describe(factory: unknown): string {
  const candidate = factory as Partial<Factory> | null;
  return `${candidate?.kind ?? '?'}/${candidate?.type ?? '?'}`;
}

/** Why a value is not a usable factory, or undefined when it is one. */
export function describeInvalidFactory(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const factory = value as Record<string, unknown>;
  if (!COMPONENT_KINDS.includes(factory.kind as ComponentKind)) {
    return `kind must be one of ${COMPONENT_KINDS.join(', ')}`;
  }
  if (typeof factory.type !== 'string' || !TYPE_PATTERN.test(factory.type)) {
    return 'type must be lower_snake_case';
  }
  if (typeof factory.configSchema !== 'object' || factory.configSchema === null) {
    return 'configSchema must be a JSON Schema object';
  }
  if (typeof factory.create !== 'function') return 'create must be a function';
  if (factory.kind === 'extension') return undefined; // outside the pipelines: no data types
  const producible: readonly string[] = factory.kind === 'processor' ? [...DATA_TYPES, 'any'] : DATA_TYPES;
  if (factory.kind !== 'exporter' && !producible.includes(factory.produces as string)) {
    return `produces must be one of ${producible.join(', ')}`;
  }
  const consumable: readonly string[] = factory.kind === 'receiver' ? DATA_TYPES : [...DATA_TYPES, 'any'];
  if (factory.kind !== 'receiver' && !consumable.includes(factory.consumes as string)) {
    return `consumes must be one of ${consumable.join(', ')}`;
  }
  // A processor passes its pipeline's type through, or turns one type into another: not half of each.
  if (factory.kind === 'processor' && (factory.consumes === 'any') !== (factory.produces === 'any')) {
    return "a processor's consumes and produces are both 'any' or neither";
  }
  return undefined;
}

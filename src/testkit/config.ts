// A component's config as the framework would hand it over (part of `tracepipe/testing`).

import { validateAgainst } from '../config/ajv.ts';
import type { Factory } from '../pipeline/component.ts';

/**
 * `partial` validated against the factory's schema, with the schema's defaults filled in, and its
 * cross-field `validate()` run — what `create()` receives from a config file. Throws with every
 * problem when the config is invalid, so a test cannot build a component from a config no user
 * could write.
 */
export function configFor<C = Record<string, unknown>>(
  factory: Pick<Factory, 'type' | 'configSchema' | 'validate'>,
  partial: object = {},
): C {
  const config = structuredClone(partial) as Record<string, unknown>;
  const errors = validateAgainst(factory.configSchema, config, factory.type);
  if (errors.length === 0 && factory.validate) errors.push(...factory.validate(config as never));
  if (errors.length > 0) throw new Error(`invalid ${factory.type} config:\n${errors.join('\n')}`);
  return config as C;
}

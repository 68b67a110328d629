// Config of the example `redact` processor.

import type { ConfigOf } from 'tracepipe/plugin';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    patterns: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'Regular expressions (JavaScript syntax); every match inside a string attribute value is replaced.',
    },
    keys: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'Attribute keys whose whole value is replaced, whatever it is.',
    },
    replacement: { type: 'string', default: '[REDACTED]', description: 'Text that replaces what is redacted.' },
    include_events: { type: 'boolean', default: true, description: 'Also redact span event attributes.' },
  },
} as const;

/** The config the processor receives: derived from the schema, defaulted keys present. */
export type RedactConfig = ConfigOf<typeof configSchema>;

/** Cross-field check: every pattern must compile. */
export function validateRedactConfig(config: RedactConfig): string[] {
  const errors: string[] = [];
  config.patterns.forEach((pattern, index) => {
    try {
      new RegExp(pattern);
    } catch (error) {
      errors.push(`patterns.${index}: not a valid regular expression (${(error as Error).message})`);
    }
  });
  return errors;
}

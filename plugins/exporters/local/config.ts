// Config of the `local` exporter.

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: {
      type: 'string',
      minLength: 1,
      default: './data/traces.db',
      description: 'SQLite database file, relative to the config file (`:memory:` for a throwaway store).',
    },
  },
} as const;

export interface LocalExporterConfig {
  readonly path: string;
}

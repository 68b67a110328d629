// Config of the `loadbalancing` exporter, in the OpenTelemetry Collector's shape (`routing_key`,
// `protocol.otlp`, `resolver.static` / `resolver.dns`) so that a Collector config ports over;
// `resolver.dns.interval` and `timeout` are durations as the Collector writes them (`5s`, `250ms`)
// so that its resolver block ports over unchanged; a plain number is milliseconds.
// `protocol.otlp` is the `otlp` exporter's own schema without `endpoint` (each endpoint comes from
// the resolver), with the defaults a second tier of tracepipe proxies wants.

import ms from 'ms';
import type { ConfigOf } from 'tracepipe/plugin';
import { queuedExporterBlocks, validateRetry } from 'tracepipe/exporterhelper';
import { otlpExporterConfigSchema } from 'tracepipe/otlp';

const { endpoint: _endpoint, ...otlpProperties } = otlpExporterConfigSchema.properties;

/** A `host:port` (or `http(s)://host:port`) entry of `resolver.static.hostnames`. */
export const HOSTNAME_PATTERN = '^(https?://)?(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._-]+):[0-9]{1,5}$';

/** A duration as the Collector's config writes one (`5s`, `250ms`, `1m`, `1h`), or milliseconds. */
const DURATION = {
  type: ['string', 'integer'],
  pattern: '^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$',
  minimum: 1,
} as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    routing_key: {
      enum: ['traceID', 'service'],
      default: 'traceID',
      description:
        "What picks the endpoint: `traceID` (every span of a trace goes to one endpoint) or `service` (the resource's `service.name`).",
    },
    protocol: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'How spans are sent to each endpoint.',
      properties: {
        otlp: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description:
            'The `otlp` exporter settings used for every endpoint (all but `endpoint`); each endpoint gets its own queue, retries and on-disk queue.',
          properties: {
            ...otlpProperties,
            forward_tenant: {
              ...otlpProperties.forward_tenant,
              default: true,
              description:
                "Send each batch's API key and project as `X-API-Key` and `Service-Project`, so that the second tier uploads each tenant's spans with that tenant's key. Turn off only for endpoints that are not tracepipe.",
            },
            ...queuedExporterBlocks({
              queue_size: 100,
              // A slow or hung endpoint's batches wait on its disk queue instead of refusing
              // requests whose other spans are bound for healthy endpoints.
              overflow_to_disk: true,
              // Short, so that a dead endpoint's batches reach its on-disk queue within seconds
              // instead of holding its senders (and filling its memory queue) for a minute.
              retry: { max_retries: 2, initial_backoff_ms: 1000, max_backoff_ms: 5000, multiplier: 1.5 },
              persistent_queue: { enabled: true, directory: './data/loadbalancing' },
            }),
          },
        },
      },
    },
    resolver: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      default: { static: { hostnames: ['localhost:4318'] } },
      description: 'Where the endpoints come from: exactly one of `static` or `dns`.',
      properties: {
        static: {
          type: 'object',
          additionalProperties: false,
          required: ['hostnames'],
          description: 'A fixed list of endpoints.',
          properties: {
            hostnames: {
              type: ['array', 'string'],
              items: { type: 'string', pattern: HOSTNAME_PATTERN },
              minItems: 1,
              minLength: 1,
              description:
                'Endpoints as `host:port` (plain HTTP; `https://host:port` for TLS): a list, or one comma-separated string (as an environment variable gives it). Default: `localhost:4318`.',
            },
          },
        },
        dns: {
          type: 'object',
          additionalProperties: false,
          required: ['hostname'],
          description:
            'A name that resolves to every endpoint (a Kubernetes headless service), resolved again every `interval`.',
          'x-removed-keys': {
            interval_ms: 'renamed to interval: a duration such as 5s, as the Collector writes it',
            timeout_ms: 'renamed to timeout: a duration such as 1s, as the Collector writes it',
          },
          properties: {
            hostname: {
              type: 'string',
              minLength: 1,
              description: 'The name to resolve (A and AAAA records, /etc/hosts included).',
            },
            port: {
              type: 'integer',
              minimum: 1,
              maximum: 65535,
              default: 4318,
              description: 'Port of every resolved address (the OTLP/HTTP port of the second tier).',
            },
            interval: {
              ...DURATION,
              default: '5s',
              description:
                'How often the name is resolved again (`5s`, `500ms`, `1m`; a number is milliseconds; at least 100 ms); a changed set of addresses rebalances the ring.',
            },
            timeout: {
              ...DURATION,
              default: '1s',
              description:
                'Time limit of one resolution (`1s`, `250ms`; a number is milliseconds); a failed or late one keeps the current endpoints.',
            },
          },
        },
      },
    },
  },
} as const;

export type LoadBalancingExporterConfig = ConfigOf<typeof configSchema>;

/** Milliseconds of a validated `DURATION` value. */
export function durationMs(value: string | number): number {
  return typeof value === 'number' ? value : ms(value as ms.StringValue);
}

/** `resolver.static.hostnames` as a list (an environment variable gives one comma-separated string). */
export function staticHostnames(hostnames: readonly string[] | string): string[] {
  const list = typeof hostnames === 'string' ? hostnames.split(',') : hostnames;
  return [...new Set(list.map((entry) => entry.trim()).filter((entry) => entry.length > 0))];
}

/**
 * Cross-field rules: the retry block's; comma-separated hostnames checked entry by entry; the DNS
 * resolver re-resolving at most every 100 ms.
 */
export function validateConfig(config: LoadBalancingExporterConfig): string[] {
  const errors = validateRetry(config.protocol.otlp.retry_on_failure).map((error) => `protocol.otlp.${error}`);
  const hostnames = config.resolver.static?.hostnames;
  if (typeof hostnames === 'string') {
    const list = staticHostnames(hostnames);
    if (list.length === 0) errors.push('resolver.static.hostnames: must name at least one endpoint');
    const pattern = new RegExp(HOSTNAME_PATTERN);
    for (const entry of list)
      if (!pattern.test(entry)) errors.push(`resolver.static.hostnames: "${entry}" is not host:port`);
  }
  const dns = config.resolver.dns;
  if (dns && durationMs(dns.interval) < 100) errors.push('resolver.dns.interval: must be at least 100ms');
  return errors;
}

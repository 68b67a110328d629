// Config of the `memory_limiter` processor: the OpenTelemetry Collector's keys, with the unit in
// the name of each duration (docs/conventions.md).

import type { ConfigOf } from 'tracepipe/plugin';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    check_interval_ms: {
      type: 'integer',
      minimum: 1,
      default: 1000,
      description:
        "How often the process's memory is measured, and with it whether data is refused (`MEMORY_LIMITER_CHECK_INTERVAL_MS`). Also the `Retry-After` of a refusal.",
    },
    limit_mib: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description:
        "The hard limit on the process's resident memory (RSS), in MiB (`MEMORY_LIMITER_LIMIT_MIB`): above it a garbage collection is forced at each check. 0: not set, `limit_percentage` applies; when set, it wins over `limit_percentage`.",
    },
    spike_limit_mib: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description:
        'With `limit_mib`: how far below the hard limit data starts being refused (the soft limit is `limit_mib` minus this), room for the growth of one check interval. 0: a fifth of `limit_mib`.',
    },
    limit_percentage: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      default: 80,
      description:
        "The hard limit as a percentage of the memory available: the cgroup limit of the container when there is one, else the machine's total (`MEMORY_LIMITER_LIMIT_PERCENTAGE`). Used when `limit_mib` is 0.",
    },
    spike_limit_percentage: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      default: 0,
      description:
        'With `limit_percentage`: the distance from the hard to the soft limit, as a percentage of the memory available. 0: a fifth of the hard limit.',
    },
    min_gc_interval_when_soft_limited_ms: {
      type: 'integer',
      minimum: 0,
      default: 10000,
      description:
        'Above the soft limit (and below the hard one), a garbage collection is forced at most this often: refusing lowers what is allocated, so V8 alone might not collect what the load left.',
    },
    min_gc_interval_when_hard_limited_ms: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'Above the hard limit, a garbage collection is forced at most this often (0: at every check).',
    },
  },
} as const;

export type MemoryLimiterConfig = ConfigOf<typeof configSchema>;

/** Cross-field rules: one limit is set, and the spike leaves a soft limit above zero. */
export function validateConfig(config: MemoryLimiterConfig): string[] {
  const errors: string[] = [];
  if (config.limit_mib === 0 && config.limit_percentage === 0)
    errors.push('limit_mib: set limit_mib or limit_percentage above 0');
  if (config.limit_mib > 0 && config.spike_limit_mib >= config.limit_mib)
    errors.push(`spike_limit_mib: must be below limit_mib (${config.limit_mib})`);
  if (config.limit_mib === 0 && config.spike_limit_percentage >= config.limit_percentage && config.limit_percentage > 0)
    errors.push(`spike_limit_percentage: must be below limit_percentage (${config.limit_percentage})`);
  return errors;
}

export const MiB = 1024 * 1024;

/** The two limits, in bytes of resident memory. */
export interface MemoryLimits {
  /** Above it a collection is forced at every check. */
  readonly hardBytes: number;
  /** Above it data is refused. */
  readonly softBytes: number;
}

/** The limits a config sets, given the memory available to the process (for the percentages). */
export function memoryLimits(config: MemoryLimiterConfig, availableBytes: number): MemoryLimits {
  if (config.limit_mib > 0) {
    const hardBytes = config.limit_mib * MiB;
    const spikeBytes = config.spike_limit_mib > 0 ? config.spike_limit_mib * MiB : hardBytes / 5;
    return { hardBytes, softBytes: hardBytes - spikeBytes };
  }
  const hardBytes = Math.floor((availableBytes * config.limit_percentage) / 100);
  const spikeBytes =
    config.spike_limit_percentage > 0
      ? Math.floor((availableBytes * config.spike_limit_percentage) / 100)
      : Math.floor(hardBytes / 5);
  return { hardBytes, softBytes: hardBytes - spikeBytes };
}

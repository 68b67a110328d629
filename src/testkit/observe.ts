// Test helpers (part of `tracepipe/testing`) to observe a component from outside: its log lines (pino JSON, captured in memory)
// and its metric values (read from the prom-client registry).

import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function captureLogs(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString('utf8').split('\n')) if (text.trim()) lines.push(JSON.parse(text) as LogLine);
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** The sum of a metric's values whose labels include `labels`. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, expected]) => String(value.labels[key]) === expected))
    .reduce((sum, value) => sum + value.value, 0);
}

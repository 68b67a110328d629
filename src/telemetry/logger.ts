// The process's own logs: structured JSON (pino) by default, human-readable on a terminal.

import pino from 'pino';
import type { Logger } from 'pino';
import type { LogLevel } from './levels.ts';

export type { LogLevel } from './levels.ts';
export { LOG_LEVELS } from './levels.ts';

export interface LoggerOptions {
  level?: LogLevel;
  /** `json` always, `pretty` always, or `auto`: pretty when stdout is a terminal. */
  format?: 'json' | 'pretty' | 'auto';
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  if (!pretty) return pino({ level, base: { service: 'tracepipe' } });
  return pino({
    level,
    base: undefined,
    transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l' } },
  });
}

/** A logger that writes nothing: for tests and for components created outside a service. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

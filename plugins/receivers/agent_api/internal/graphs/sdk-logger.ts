// The logger that graph code reaches with `getLogger()` from `@langchain/langgraph-sdk/logging`.
// That function returns whatever the server registered under
// `globalThis[Symbol.for("langgraph.api.sdk-logger")]` and throws when nothing is there, so a
// graph that calls it at import time would not load at all. The SDK types it as a winston-style
// leveled logger (`info(message, ...meta)`, `info({message, ...fields})`); this adapter writes
// those calls to the server's pino logger, so graph logs sit beside the server's own.

import type { Logger } from 'pino';

const SDK_LOGGER = Symbol.for('langgraph.api.sdk-logger');

type PinoLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The SDK's (winston's npm) levels, each on the pino level that means the same. */
const LEVELS: Readonly<Record<string, PinoLevel>> = {
  error: 'error',
  warn: 'warn',
  help: 'info',
  data: 'info',
  info: 'info',
  prompt: 'info',
  http: 'info',
  input: 'info',
  verbose: 'debug',
  debug: 'debug',
  silly: 'trace',
};

type LeveledLogMethod = (message: unknown, ...meta: unknown[]) => SdkLogger;
export type SdkLogger = Record<keyof typeof LEVELS, LeveledLogMethod>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Error);
}

/** One call's fields and message, as winston reads its arguments. */
function toPinoArgs(message: unknown, meta: readonly unknown[]): [Record<string, unknown>, string | undefined] {
  const fields: Record<string, unknown> = {};
  const extra: unknown[] = [];
  for (const item of meta) {
    if (isRecord(item)) Object.assign(fields, item);
    else if (item instanceof Error) fields.err = item;
    else extra.push(item);
  }
  if (extra.length > 0) fields.args = extra;
  if (isRecord(message)) {
    const { message: text, ...rest } = message;
    return [{ ...rest, ...fields }, typeof text === 'string' ? text : undefined];
  }
  if (message instanceof Error) return [{ ...fields, err: message }, message.message];
  return [fields, typeof message === 'string' ? message : JSON.stringify(message)];
}

export function sdkLoggerFor(logger: Logger): SdkLogger {
  const sdkLogger = {} as SdkLogger;
  for (const [name, level] of Object.entries(LEVELS)) {
    sdkLogger[name] = (message, ...meta) => {
      const [fields, text] = toPinoArgs(message, meta);
      logger[level](fields, text);
      return sdkLogger;
    };
  }
  return sdkLogger;
}

/**
 * Registers `logger` as the SDK logger of this process unless one is already there (another
 * server in the same process, or the host's own); the returned function unregisters it, and
 * only if it is still the registered one.
 */
export function registerSdkLogger(logger: Logger): () => void {
  const slot = globalThis as Record<symbol, unknown>;
  if (SDK_LOGGER in slot) return () => undefined;
  const registered = sdkLoggerFor(logger);
  slot[SDK_LOGGER] = registered;
  return () => {
    if (slot[SDK_LOGGER] === registered) delete slot[SDK_LOGGER];
  };
}

import type { ReceiverFactory } from 'tracepipe/plugin';
import type { LangSmithReceiverConfig } from './config.ts';
import { configSchema } from './config.ts';
import { LangSmithReceiver } from './receiver.ts';

export type { LangSmithReceiverConfig } from './config.ts';

export const langSmithReceiverFactory = Object.freeze({
  kind: 'receiver',
  type: 'langsmith',
  stability: 'alpha',
  description:
    "Receives runs from apps traced by the LangSmith SDKs: the tracing backend's ingest API (/runs/multipart, /runs/batch, POST /runs, PATCH /runs/{id}, GET /info).",
  produces: 'runs',
  configSchema,
  listenAddresses: (config) => [`${config.host}:${config.port}`],
  create: (settings, config, next) => new LangSmithReceiver(settings, config, next),
} satisfies ReceiverFactory<LangSmithReceiverConfig, 'runs'>);

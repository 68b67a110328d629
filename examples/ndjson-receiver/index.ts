// An example third-party plugin: a receiver that takes spans as newline-delimited JSON over HTTP
// and journals every request before it answers, so that "202 Accepted" survives a kill -9. A package
// of its own that uses tracepipe only through its public exports (`tracepipe/plugin`,
// `tracepipe/receiverhelper`, `tracepipe/confighttp`, `tracepipe/testing`); see README.md.

import type { ReceiverFactory } from 'tracepipe/plugin';
import type { NdjsonReceiverConfig } from './config.ts';
import { configSchema } from './config.ts';
import { NdjsonReceiver } from './receiver.ts';

export type { NdjsonReceiverConfig } from './config.ts';
export { NdjsonReceiver } from './receiver.ts';

const ndjsonReceiverFactory = Object.freeze({
  kind: 'receiver',
  type: 'ndjson',
  stability: 'alpha',
  description: 'Receives spans as newline-delimited JSON (POST /v1/spans), journaled before they are acknowledged.',
  produces: 'spans',
  configSchema,
  listenAddresses: (config) => [`${config.host}:${config.port}`],
  create: (settings, config, next) => new NdjsonReceiver(settings, config, next),
} satisfies ReceiverFactory<NdjsonReceiverConfig, 'spans'>);

export default ndjsonReceiverFactory;

import type { ReceiverFactory } from 'tracepipe/plugin';
import type { OtlpReceiverConfig } from './config.ts';
import { configSchema, validateConfig } from './config.ts';
import { OtlpReceiver } from './receiver.ts';

export type { OtlpReceiverConfig } from './config.ts';

export const otlpReceiverFactory = Object.freeze({
  kind: 'receiver',
  type: 'otlp',
  stability: 'beta',
  description:
    'Receives OTLP trace exports over HTTP (protobuf or JSON; gzip, deflate or zstd) and gRPC, with per-request API key and project.',
  produces: 'spans',
  configSchema,
  validate: validateConfig,
  listenAddresses: (config) => [
    `${config.host}:${config.port}`,
    ...(config.protocols.grpc.enabled ? [`${config.protocols.grpc.host}:${config.protocols.grpc.port}`] : []),
  ],
  create: (settings, config, next) => new OtlpReceiver(settings, config, next),
} satisfies ReceiverFactory<OtlpReceiverConfig, 'spans'>);

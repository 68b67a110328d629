// One side of the ingest benchmark, run in its own process so that the load generator does not
// share its event loop: either the `otlp` receiver with a no-op pipeline, or a bare Node HTTP
// server that only reads the body (the ceiling on this machine). Prints its port on stdout.
//
//   node --import tsx --conditions=tracepipe-source bench/ingest/server.ts receiver|bare

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { otlpReceiverFactory } from '../../plugins/receivers/otlp/index.ts';
import type { OtlpReceiverConfig } from '../../plugins/receivers/otlp/config.ts';
import type { OtlpReceiver } from '../../plugins/receivers/otlp/receiver.ts';
import { validateAgainst } from '../../src/config/ajv.ts';
import type { Consumer } from '../../src/pipeline/component.ts';
import { nopSettings } from '../../src/pipeline/testing.ts';

const mode = process.argv[2];

if (mode === 'bare') {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      Buffer.concat(chunks);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
} else if (mode === 'receiver') {
  const config = { port: 0 } as unknown as OtlpReceiverConfig;
  validateAgainst(otlpReceiverFactory.configSchema, config, 'otlp');
  const noop: Consumer<'spans'> = { mutatesData: false, consume: async () => {} };
  const receiver = otlpReceiverFactory.create(nopSettings('receiver', 'otlp'), config, noop) as OtlpReceiver;
  await receiver.start(new AbortController().signal);
  console.log(receiver.port);
} else {
  console.error('usage: server.ts receiver|bare');
  process.exit(2);
}

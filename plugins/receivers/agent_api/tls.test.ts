// The agent server over TLS (`tls`, the same block as every confighttp server): HTTPS with the
// configured certificate, plaintext HTTP refused, and with `client_ca_file` a client without a
// certificate from that CA refused. Certificates are made for the run by openssl.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { testCertificates } from 'tracepipe/testing';
import type { TestCertificates } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

function get(secure: boolean, port: number, path: string, options: RequestOptions = {}): Promise<number> {
  const request = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', servername: 'localhost', port, path, agent: false, ...options }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

describe('agent_api over mutual TLS', () => {
  let certs: TestCertificates;
  let server: TestServer;
  before(async () => {
    certs = testCertificates();
    server = await startTestServer({
      tls: {
        cert_file: certs.serverCertFile,
        key_file: certs.serverKeyFile,
        client_ca_file: certs.caFile,
        min_version: '1.2',
      },
    });
  });
  after(() => server?.stop());

  it('serves HTTPS to a client with a certificate from the CA, and describes https URLs', async () => {
    const port = server.receiver.port!;
    assert.equal(await get(true, port, '/ok', { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey }), 200);
    const urls = server.receiver.describe().endpoints?.map((endpoint) => endpoint.url) ?? [];
    assert.ok(urls.length > 0 && urls.every((url) => url.startsWith('https://')), urls.join(' '));
  });

  it('refuses plaintext HTTP and a client without a certificate', async () => {
    const port = server.receiver.port!;
    await assert.rejects(get(false, port, '/ok'));
    await assert.rejects(get(true, port, '/ok', { ca: certs.ca }));
  });
});

// The agent server over TLS (`tls`, the same block as every confighttp server): HTTPS with the
// configured certificate, plaintext HTTP refused, and with `client_ca_file` a client without a
// certificate from that CA refused. Certificates are made for the run by openssl.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getStatus, testCertificates } from 'tracepipe/testing';
import type { TestCertificates } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

describe('agent_api over mutual TLS', () => {
  let certs: TestCertificates;
  let server: TestServer;
  before(async () => {
    certs = testCertificates();
    server = await startTestServer({ tls: certs.serverTls({ mutual: true }) });
  });
  after(() => server?.stop());

  it('serves HTTPS to a client with a certificate from the CA, and describes https URLs', async () => {
    const port = server.receiver.port!;
    assert.equal(await getStatus(port, '/ok', certs.clientTls({ withCertificate: true })), 200);
    const urls = server.receiver.describe().endpoints?.map((endpoint) => endpoint.url) ?? [];
    assert.ok(urls.length > 0 && urls.every((url) => url.startsWith('https://')), urls.join(' '));
  });

  it('refuses plaintext HTTP and a client without a certificate', async () => {
    const port = server.receiver.port!;
    await assert.rejects(getStatus(port, '/ok', { plaintext: true }));
    await assert.rejects(getStatus(port, '/ok', certs.clientTls()));
  });
});

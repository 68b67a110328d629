// TLS from tracepipe/confighttp on every HTTP server of a service, configured from YAML: the `otlp`
// and `langsmith` receivers and the trace explorer serve HTTPS with the configured certificate,
// refuse plaintext HTTP, and with `client_ca_file` refuse clients without a certificate from that
// CA; `min_version: "1.3"` refuses a TLS 1.2 client. A `tls` block that cannot be used fails the
// start (or the config check) naming its key. Certificates are made for each run by openssl.
// (The agent server: plugins/receivers/agent_api/tls.test.ts; OTLP/gRPC: plugins/receivers/otlp/grpc.test.ts.)

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadServerTls, tlsSchema } from 'tracepipe/confighttp';
import { getStatus, testCertificates, validateAgainst } from 'tracepipe/testing';
import type { TestCertificates } from 'tracepipe/testing';
import { startService } from './support/service.ts';
import type { Service } from '../src/pipeline/service.ts';
import { tempDir } from '../src/testkit/files.ts';

describe('TLS on every HTTP server of a service', () => {
  let service: Service;
  let certs: TestCertificates;
  const ports = new Map<string, number>();
  const schemes = new Map<string, string>();

  before(async () => {
    certs = testCertificates();
    const dir = tempDir();
    const store = join(dir, 'traces.db');
    const tls = JSON.stringify(certs.serverTls());
    const mtls = JSON.stringify(certs.serverTls({ mutual: true }));
    const tls13 = JSON.stringify(certs.serverTls({ minVersion: '1.3' }));
    const yaml = `
receivers:
  otlp: { port: 0, require_api_key: false, tls: ${tls} }
  langsmith: { port: 0, require_api_key: false, tls: ${mtls} }
processors: { genai: {}, batch: {} }
exporters: { local: { path: ${store} } }
extensions:
  trace_explorer: { port: 0, path: ${store}, tls: ${tls13} }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [langsmith], processors: [batch], exporters: [local] }, traces/otlp: { receivers: [otlp], processors: [genai, batch], exporters: [local] } }
`;
    const started = await startService(yaml, dir);
    service = started.service;
    for (const id of ['otlp', 'langsmith', 'trace_explorer']) {
      const url = new URL(started.endpoint(id));
      ports.set(id, Number(url.port));
      schemes.set(id, url.protocol);
    }
  });
  after(() => service?.shutdown());

  it('every server answers HTTPS with the configured certificate, and describes https URLs', async () => {
    const client = certs.clientTls({ withCertificate: true });
    for (const [id, port] of ports) {
      assert.equal(schemes.get(id), 'https:', id);
      assert.equal(await getStatus(port, '/live', client), 200, id);
    }
  });

  it('every server refuses plaintext HTTP', async () => {
    for (const [id, port] of ports)
      await assert.rejects(getStatus(port, '/live', { plaintext: true }), `${id} answered plaintext HTTP`);
  });

  it('a client that does not trust the CA refuses the server', async () => {
    await assert.rejects(getStatus(ports.get('otlp')!, '/live'), /self-signed|unable to verify|certificate/i);
  });

  it('with client_ca_file, a client without a certificate is refused and one with a certificate from the CA served', async () => {
    const port = ports.get('langsmith')!;
    await assert.rejects(getStatus(port, '/info', certs.clientTls()));
    const stranger = testCertificates();
    await assert.rejects(
      getStatus(port, '/info', { ca: certs.ca, cert: stranger.clientCert, key: stranger.clientKey }),
    );
    assert.equal(await getStatus(port, '/info', certs.clientTls({ withCertificate: true })), 200);
  });

  it('min_version 1.3 refuses a TLS 1.2 client and serves a TLS 1.3 one', async () => {
    const port = ports.get('trace_explorer')!;
    await assert.rejects(getStatus(port, '/live', { ...certs.clientTls(), maxVersion: 'TLSv1.2' }));
    assert.equal(await getStatus(port, '/live', { ...certs.clientTls(), minVersion: 'TLSv1.3' }), 200);
  });
});

describe('a tls block that cannot be used names its key', () => {
  let certs: TestCertificates;
  before(() => {
    certs = testCertificates();
  });

  it('the schema: both files required, min_version one of 1.2 and 1.3', () => {
    const schema = { type: 'object', properties: { tls: tlsSchema() } };
    assert.match(validateAgainst(schema, { tls: { cert_file: 'c.pem' } }, 'otlp').join('\n'), /otlp\.tls.*key_file/);
    assert.match(
      validateAgainst(schema, { tls: { cert_file: 'c.pem', key_file: 'k.pem', min_version: '1.1' } }, 'otlp').join(
        '\n',
      ),
      /otlp\.tls\.min_version/,
    );
  });

  it('at start: a missing file, a file that is not what its key says, a key of another certificate', async () => {
    const notPem = join(certs.dir, 'not.pem');
    writeFileSync(notPem, 'hello\n');
    const other = testCertificates();
    const server = certs.serverTls();
    const cases: [Parameters<typeof loadServerTls>[0], RegExp][] = [
      [
        { ...server, cert_file: join(certs.dir, 'absent.pem') },
        /^tls\.cert_file: cannot read .*absent\.pem \(ENOENT\)/,
      ],
      [{ ...server, key_file: notPem }, /^tls\.key_file: not a PEM private key/],
      [{ ...server, cert_file: notPem }, /^tls\.cert_file: not a PEM certificate/],
      [{ ...server, client_ca_file: certs.serverKeyFile }, /^tls\.client_ca_file: not a PEM CA bundle/],
      [{ ...server, key_file: other.serverKeyFile }, /^tls\.key_file: the key does not belong to the certificate/],
    ];
    for (const [config, message] of cases) await assert.rejects(loadServerTls(config), { message });
    await assert.rejects(
      loadServerTls({ ...server, key_file: notPem }, (path) => path, 'protocols.grpc.tls'),
      { message: /^protocols\.grpc\.tls\.key_file: / },
    );
  });

  it('a receiver with such a block does not start, and says which key', async () => {
    const dir = tempDir();
    const yaml = `
receivers:
  otlp: { port: 0, require_api_key: false, tls: { cert_file: ${certs.serverCertFile}, key_file: ./missing.key } }
processors: { genai: {} }
exporters: { local: { path: ${join(dir, 'traces.db')} } }
service:
  pipelines: { traces: { receivers: [otlp], processors: [genai], exporters: [local] } }
`;
    await assert.rejects(startService(yaml, dir), /tls\.key_file: cannot read .*missing\.key/);
  });
});

// Certificates for tests of TLS servers: a throwaway CA, a server certificate it signed for
// `localhost` and 127.0.0.1, and a client certificate it signed (for mutual TLS), written as PEM
// files by the machine's `openssl` — the real thing a server loads, made fresh for each test;
// with the `tls` block that serves them and the options a client trusts them with, and a GET that
// tells whether a TLS server answers a given client.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { TlsConfig, TlsVersion } from '../http/tls.ts';
import { tempDir } from './files.ts';

/** Paths of the PEM files `testCertificates` wrote, and the CA's contents for a client to trust. */
export interface TestCertificates {
  readonly dir: string;
  /** The CA that signed both certificates: a client trusts it, a server requires clients to chain to it. */
  readonly caFile: string;
  readonly ca: Buffer;
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  readonly clientCert: Buffer;
  readonly clientKey: Buffer;
  /**
   * The `tls` block of a server config that serves the server certificate; `mutual` also sets
   * `client_ca_file`, so that only clients with a certificate from this CA are served.
   * `min_version` is `minVersion`, by default 1.2 (the schema's default, written out so that the
   * block is whole as a validated config holds it).
   */
  serverTls(options?: {
    readonly mutual?: boolean;
    readonly minVersion?: TlsVersion;
  }): TlsConfig & { readonly min_version: TlsVersion };
  /**
   * What a client passes (to `https.request`, `tls.connect`, `getStatus`) to trust this CA, and
   * with `withCertificate` to present the client certificate too.
   */
  clientTls(options?: { readonly withCertificate?: boolean }): { ca: Buffer; cert?: Buffer; key?: Buffer };
}

/** Each openssl call ends well within this; a stuck one fails the test instead of hanging it. */
const OPENSSL_TIMEOUT_MS = 30_000;

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: OPENSSL_TIMEOUT_MS });
}

/** A key pair on P-256 (quick to make) and a certificate for `subject` signed by the test CA. */
function signed(dir: string, name: string, subject: string, extensions: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
  openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
}

/**
 * Writes a CA, a server certificate for `localhost`/127.0.0.1/::1 and a client certificate, all
 * valid for two days, into a fresh temporary directory (or `dir`). Needs `openssl` on the PATH.
 */
export function testCertificates(dir: string = tempDir('tp-tls-')): TestCertificates {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=tracepipe test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    ],
    dir,
  );
  signed(
    dir,
    'server',
    '/CN=localhost',
    'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n',
  );
  signed(dir, 'client', '/CN=tracepipe test client', 'extendedKeyUsage=clientAuth\n');
  const path = (name: string) => join(dir, name);
  const ca = readFileSync(path('ca.pem'));
  const clientCert = readFileSync(path('client.pem'));
  const clientKey = readFileSync(path('client.key'));
  return {
    dir,
    caFile: path('ca.pem'),
    ca,
    serverCertFile: path('server.pem'),
    serverKeyFile: path('server.key'),
    clientCertFile: path('client.pem'),
    clientKeyFile: path('client.key'),
    clientCert,
    clientKey,
    serverTls: ({ mutual = false, minVersion = '1.2' } = {}) => ({
      cert_file: path('server.pem'),
      key_file: path('server.key'),
      ...(mutual ? { client_ca_file: path('ca.pem') } : {}),
      min_version: minVersion,
    }),
    clientTls: ({ withCertificate = false } = {}) =>
      withCertificate ? { ca, cert: clientCert, key: clientKey } : { ca },
  };
}

/**
 * GET `path` from a server on 127.0.0.1:`port` over HTTPS, as `localhost` (the name the test
 * server certificate carries), with `options` for the handshake (`clientTls()`, TLS versions); with
 * `plaintext: true` over plain HTTP instead. Resolves with the status; rejects when the connection
 * is refused or cut, as a TLS server does to a client it does not serve.
 */
export function getStatus(
  port: number,
  path: string,
  options: RequestOptions & { readonly plaintext?: boolean } = {},
): Promise<number> {
  const { plaintext = false, ...tls } = options;
  const target = { host: '127.0.0.1', port, path, agent: false as const };
  return new Promise((resolve, reject) => {
    const answered = (response: IncomingMessage) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    };
    const request = plaintext
      ? httpRequest(target, answered)
      : httpsRequest({ servername: 'localhost', ...target, ...tls }, answered);
    request.on('error', reject).end();
  });
}

// Certificates for tests of TLS servers: a throwaway CA, a server certificate it signed for
// `localhost` and 127.0.0.1, and a client certificate it signed (for mutual TLS), written as PEM
// files by the machine's `openssl` — the real thing a server loads, made fresh for each test.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  return {
    dir,
    caFile: path('ca.pem'),
    ca: readFileSync(path('ca.pem')),
    serverCertFile: path('server.pem'),
    serverKeyFile: path('server.key'),
    clientCertFile: path('client.pem'),
    clientKeyFile: path('client.key'),
    clientCert: readFileSync(path('client.pem')),
    clientKey: readFileSync(path('client.key')),
  };
}

// TLS for a tracepipe server (the Collector's confighttp `tls:` block): the config schema
// fragment, and the loading of its files into the options Node's TLS servers take. Files are read
// once, when the server starts; to rotate certificates, replace the files and restart the service
// (or let a config reload restart the component). Every field error names its key, so that an
// operator knows which line of the YAML to fix.

import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { SecureContextOptions, SecureVersion } from 'node:tls';

/** The TLS versions `min_version` accepts, as the Collector spells them. */
export const TLS_VERSIONS = ['1.2', '1.3'] as const;

export type TlsVersion = (typeof TLS_VERSIONS)[number];

/** The `tls` block of a server's config, as YAML gives it (paths not yet resolved). */
export interface TlsConfig {
  /** The server's certificate chain (PEM). */
  readonly cert_file: string;
  /** The server's private key (PEM). */
  readonly key_file: string;
  /** Set: clients must present a certificate that chains to this CA bundle (mutual TLS). */
  readonly client_ca_file?: string;
  /** Oldest TLS version accepted; default 1.2. */
  readonly min_version?: TlsVersion;
}

/**
 * Schema fragment for a server's `tls` key. Absent: plaintext. `cert_file` and `key_file` are
 * relative to the config file's directory.
 */
export function tlsSchema(description = 'Serve over TLS (HTTPS); absent: plaintext HTTP.') {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['cert_file', 'key_file'],
    description,
    properties: {
      cert_file: {
        type: 'string',
        minLength: 1,
        description: "The server's certificate chain (PEM), relative to the config file.",
      },
      key_file: {
        type: 'string',
        minLength: 1,
        description: "The server's private key (PEM), relative to the config file.",
      },
      client_ca_file: {
        type: 'string',
        minLength: 1,
        description:
          'CA bundle (PEM) that client certificates must chain to; set: mutual TLS, clients without one are refused.',
      },
      min_version: {
        type: 'string',
        enum: TLS_VERSIONS,
        default: '1.2',
        description: 'Oldest TLS version accepted: `1.2` or `1.3`.',
      },
    },
  } as const;
}

/** What a TLS server is created with: the files' contents, and whether clients must prove who they are. */
export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** The client CA bundle; set exactly when client certificates are required. */
  readonly ca?: Buffer;
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
  readonly minVersion: SecureVersion;
}

/** A `tls` block that cannot be used: a file missing or unreadable, or not what its key says. */
export class TlsConfigError extends Error {
  override readonly name = 'TlsConfigError';
  constructor(
    /** The config key at fault, as `tls.cert_file`. */
    readonly field: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${field}: ${message}`, options);
  }
}

/**
 * Reads the files of a `tls` block and checks that they make a server: each file parses as what
 * its key names, and the key belongs to the certificate. `resolvePath` turns a configured path
 * into one to read (`host.resolvePath`: relative to the config file); `prefix` is the block's key
 * in the component's config, used in error messages (`protocols.grpc.tls`).
 */
export async function loadServerTls(
  config: TlsConfig,
  resolvePath: (path: string) => string = (path) => path,
  prefix = 'tls',
): Promise<ServerTls> {
  const read = async (key: keyof TlsConfig & `${string}_file`): Promise<Buffer> => {
    const path = resolvePath(config[key] as string);
    try {
      return await readFile(path);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new TlsConfigError(`${prefix}.${key}`, `cannot read ${path} (${reason})`, { cause: error });
    }
  };
  const [cert, key, ca] = await Promise.all([
    read('cert_file'),
    read('key_file'),
    config.client_ca_file ? read('client_ca_file') : undefined,
  ]);
  const check = (field: string, what: string, options: SecureContextOptions): void => {
    try {
      createSecureContext(options);
      // A CA bundle without a certificate in it is accepted by Node, and then trusts no one.
      if (options.ca) new X509Certificate(options.ca as Buffer);
    } catch (error) {
      throw new TlsConfigError(`${prefix}.${field}`, `${what} (${(error as Error).message})`, { cause: error });
    }
  };
  check('cert_file', 'not a PEM certificate', { cert });
  check('key_file', 'not a PEM private key', { key });
  if (ca) check('client_ca_file', 'not a PEM CA bundle', { ca });
  check('key_file', 'the key does not belong to the certificate of cert_file', { cert, key });
  return {
    cert,
    key,
    ...(ca ? { ca } : {}),
    requestCert: ca !== undefined,
    rejectUnauthorized: ca !== undefined,
    minVersion: config.min_version === '1.3' ? 'TLSv1.3' : 'TLSv1.2',
  };
}

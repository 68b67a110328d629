// Where the load balancer's endpoints come from. `static` names them once; `dns` resolves a name
// (a Kubernetes headless service: one A record per ready pod) at start and every `interval_ms`,
// and reports the set only when it changed — in any order, since the ring sorts it. A failed or
// late resolution keeps the endpoints known so far, as the OpenTelemetry Collector's resolver
// does: a DNS hiccup must not empty the ring and turn every request away.

import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import { errorMessage } from 'tracepipe/plugin';

/** Resolves a host name to addresses (IPv4 or IPv6 text). Injected by tests as a stub. */
export type LookupFunction = (hostname: string) => Promise<readonly string[]>;

export const systemLookup: LookupFunction = async (hostname) =>
  (await lookup(hostname, { all: true })).map((address) => address.address);

/** Called with the new endpoint set whenever it changes; the resolver waits for it before the next resolution. */
export type EndpointsListener = (endpoints: readonly string[]) => Promise<void>;

export interface Resolver {
  /** Resolves once and reports; later resolutions run in the background until `stop()`. */
  start(listener: EndpointsListener): Promise<void>;
  /** Stops resolving (idempotent). */
  stop(): void;
}

export class StaticResolver implements Resolver {
  constructor(private readonly endpoints: readonly string[]) {}

  async start(listener: EndpointsListener): Promise<void> {
    await listener(this.endpoints);
  }

  stop(): void {}
}

export interface DnsResolverOptions {
  readonly hostname: string;
  readonly port: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly lookup: LookupFunction;
  readonly logger: Logger;
  /** Counts each resolution by outcome. */
  readonly onResolution: (outcome: 'success' | 'failure') => void;
}

export class DnsResolver implements Resolver {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private last?: string;
  private failing = false;

  constructor(private readonly options: DnsResolverOptions) {}

  async start(listener: EndpointsListener): Promise<void> {
    await this.resolve(listener);
    const next = (): void => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.resolve(listener).finally(next), this.options.intervalMs);
    };
    next();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async resolve(listener: EndpointsListener): Promise<void> {
    const { hostname, port, timeoutMs, logger } = this.options;
    let addresses: readonly string[];
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        this.options.lookup(hostname),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (addresses.length === 0) throw new Error('no addresses');
    } catch (error) {
      this.options.onResolution('failure');
      if (!this.failing) {
        this.failing = true;
        logger.warn(
          { hostname, error: errorMessage(error) },
          'The endpoints could not be resolved; the ones known so far are kept.',
        );
      }
      return;
    } finally {
      clearTimeout(timer);
    }
    this.options.onResolution('success');
    if (this.failing) {
      this.failing = false;
      logger.info({ hostname }, 'The endpoints resolve again.');
    }
    if (this.stopped) return;
    const endpoints = [...new Set(addresses)].sort().map((address) => hostPort(address, port));
    const key = endpoints.join(',');
    if (key === this.last) return;
    this.last = key;
    await listener(endpoints);
  }
}

/** `address:port`, with an IPv6 address in brackets. */
export function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

// What an operator reads about a failing destination: one WARN when it starts failing (why, where,
// how many tenants have data waiting) and one INFO once it is back and the backlog the failures
// left is delivered (how many batches and items arrived late, after how many failed attempts).
// Never a line per attempt or per batch — per-item events are metrics (README.md, Observability).
// WARNs are at most one per `quietMs`: a destination that flaps does not flood the log; an outage
// whose WARN was held back is announced at its next failure once the quiet time is over.

import type { Logger } from 'pino';
import { errorMessage } from '../pipeline/errors.ts';
import type { Failure } from './verdict.ts';
import { failureLabel } from './verdict.ts';

export interface OutageLogOptions {
  readonly logger: Logger;
  /** Where the exporter sends (already without credentials: see `logEndpoint`). */
  readonly endpoint: string;
  /** `runs`, `spans`: the name of the item counts in the lines. */
  readonly dataType: string;
  readonly quietMs?: number;
  readonly now?: () => number;
}

const QUIET_MS = 60_000;

export class OutageLog {
  private state: 'healthy' | 'failing' | 'recovering' = 'healthy';
  private warned = false;
  private lastWarnAt = -Infinity;
  /** Outages that began and ended within a quiet time, never announced. */
  private unannounced = 0;
  private startedAt = 0;
  private failedAttempts = 0;
  private lateBatches = 0;
  private lateItems = 0;
  private readonly tenants = new Set<string>();

  constructor(private readonly options: OutageLogOptions) {}

  /**
   * An attempt failed in a way a retry may fix. `tenant` is the batch's, `tenantsHeld` those
   * whose data is held now — all of which the outage delays (counted, never logged).
   */
  failed(failure: Failure, tenant: string | undefined, tenantsHeld: Iterable<string>): void {
    const now = this.now();
    if (this.state === 'healthy') {
      this.state = 'failing';
      this.warned = false;
      this.startedAt = now;
      this.failedAttempts = 0;
      this.lateBatches = 0;
      this.lateItems = 0;
      this.tenants.clear();
    } else {
      this.state = 'failing';
    }
    this.failedAttempts++;
    this.tenants.add(tenant ?? '');
    for (const held of tenantsHeld) this.tenants.add(held);
    if (this.warned || now - this.lastWarnAt < (this.options.quietMs ?? QUIET_MS)) return;
    this.warned = true;
    this.lastWarnAt = now;
    this.options.logger.warn(
      {
        endpoint: this.options.endpoint,
        reason: failureLabel(failure),
        error: failure.error ? errorMessage(failure.error) : undefined,
        tenants_affected: this.tenants.size,
        ...(this.unannounced > 0 ? { outages_not_logged: this.unannounced } : {}),
      },
      'The destination is failing; batches are retried and kept until it is back.',
    );
    this.unannounced = 0;
  }

  /** The destination answered (accepted, or refused a batch for its own reasons): it is up. */
  answered(): void {
    if (this.state === 'failing') this.state = 'recovering';
  }

  /** A batch that had failed was delivered. */
  deliveredLate(items: number): void {
    if (this.state === 'healthy') return;
    this.lateBatches++;
    this.lateItems += items;
  }

  /**
   * Ends the outage once the destination answers and nothing the failures left behind is waiting
   * any more (`backlogCleared`: no failed batch in memory, the disk queue replayed).
   */
  settle(backlogCleared: boolean): void {
    if (this.state !== 'recovering' || !backlogCleared) return;
    this.state = 'healthy';
    if (!this.warned) {
      this.unannounced++;
      return;
    }
    this.options.logger.info(
      {
        endpoint: this.options.endpoint,
        outage_seconds: Math.round((this.now() - this.startedAt) / 100) / 10,
        failed_attempts: this.failedAttempts,
        tenants_affected: this.tenants.size,
        delivered_late: { batches: this.lateBatches, [this.options.dataType]: this.lateItems },
      },
      'The destination is back; what waited during the failures has been delivered.',
    );
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** An endpoint fit for logs: without user, password or query string (they may hold secrets). */
export function logEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

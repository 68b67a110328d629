// A warning logged at most once per interval, carrying how often it happened meanwhile: failures
// that can repeat for every run (a full pipeline, an unreachable webhook) must not become a burst
// of log lines. Each occurrence is also counted in a metric by the caller.

import type { Logger } from 'pino';

export class ThrottledWarning {
  private lastLoggedAt = Number.NEGATIVE_INFINITY;
  private occurrences = 0;

  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    private readonly intervalMs = 10_000,
  ) {}

  warn(fields: Record<string, unknown>): void {
    this.occurrences++;
    const now = Date.now();
    if (now - this.lastLoggedAt < this.intervalMs) return;
    this.logger.warn({ ...fields, occurrences: this.occurrences }, this.message);
    this.lastLoggedAt = now;
    this.occurrences = 0;
  }
}

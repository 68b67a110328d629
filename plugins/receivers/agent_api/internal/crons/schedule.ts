// Cron schedules: standard 5-field expressions (minute hour day-of-month month day-of-week, as in
// crontab(5): names such as `MON`/`JAN`, ranges, lists, steps, and the `@hourly`-style nicknames),
// read in UTC unless the cron names an IANA time zone. When both day fields are restricted, a day
// matching either one matches (the crontab rule). Parsing and matching are croner's; a 6-field
// expression is refused, since cron dialects disagree on whether its extra field is seconds or years.

import { Cron as CronPattern } from 'croner';
import { isoOf } from '../api/clock.ts';

/** Where the scheduler and the API read the time; tests substitute their own. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

function pattern(schedule: string, timezone: string | null): CronPattern {
  return new CronPattern(schedule.trim(), {
    paused: true,
    mode: '5-part',
    domAndDow: false,
    timezone: timezone ?? 'UTC',
  });
}

/** Why `timezone` is not an IANA zone name this runtime knows, or undefined when it is. */
export function timezoneProblem(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return undefined;
  } catch {
    return `Invalid timezone '${timezone}': expected an IANA time zone name such as 'Europe/Paris' or 'UTC'`;
  }
}

/** Why `schedule` is not a valid 5-field cron expression, or undefined when it is. */
export function scheduleProblem(schedule: string): string | undefined {
  try {
    pattern(schedule, null);
    return undefined;
  } catch (error) {
    const reason = (error as Error).message.replace(/^CronPattern:\s*/, '');
    return `Invalid cron schedule '${schedule}': ${reason}. Use the standard 5-field format (minute hour day-of-month month day-of-week), e.g. '*/5 * * * *' for every 5 minutes`;
  }
}

/**
 * The first time the schedule matches strictly after `afterMs`, as the API writes timestamps;
 * null when it never matches again (`0 0 30 2 *`).
 */
export function nextRunAfter(schedule: string, timezone: string | null, afterMs: number): string | null {
  const next = pattern(schedule, timezone).nextRun(new Date(afterMs));
  return next ? isoOf(next.getTime()) : null;
}

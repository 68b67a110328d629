// Run webhooks: once a run has ended, its record (with the final status, the thread's values and
// the error, if any) is POSTed to the run's `webhook` URL. One attempt with a time limit; a failed
// delivery is counted and logged, never retried and never affects the run.

import type { RunRecord } from '../storage/storage.ts';
import { isoNow } from '../domain/clock.ts';

const WEBHOOK_TIMEOUT_MS = 10_000;

export interface WebhookPayload {
  readonly run: RunRecord;
  readonly status: string;
  readonly startedAt: string;
  readonly values?: unknown;
}

/** Delivers the webhook; `onFailure` gets the fields to report (it counts and logs). Never rejects. */
export async function sendWebhook(url: string, payload: WebhookPayload, onFailure: (fields: Record<string, unknown>) => void): Promise<void> {
  const { error, attempt: _attempt, temporary: _temporary, ...run } = payload.run;
  const body = {
    ...run,
    status: payload.status,
    run_started_at: payload.startedAt,
    run_ended_at: isoNow(),
    webhook_sent_at: isoNow(),
    ...(payload.values !== undefined ? { values: payload.values } : {}),
    ...(error ? { error: error.message } : {}),
  };
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  } catch (failure) {
    onFailure({ run_id: payload.run.run_id, url, err: failure });
  }
}

// Run webhooks: once a run has ended, its record (with the final status, the thread's values and
// the error, if any) is POSTed to the run's `webhook` URL. A failed delivery is counted and
// logged and never affects the run.
//
// Where a webhook may go is the address policy's decision (`../net/address-policy.ts`): the URL's
// host is checked when the run is created, and again here. A hostname is resolved once, every
// address it resolves to is checked, and the connection goes to those very addresses (the
// socket's `lookup` is ours), so a DNS answer that changes between check and connect cannot
// steer the request elsewhere. Redirects are not followed — a 3xx is a failed delivery — since a
// redirect could point anywhere. Each attempt has a time limit; connection failures, timeouts,
// 429 and 5xx answers are retried a bounded number of times with a growing pause; refusals,
// redirects and other 4xx are not.
//
// A webhook that is a path (`/custom/webhook`) is a route of this server itself — the
// deployment's `http.app`, as on the LangGraph platform — and goes to its own listener, which the
// address policy does not judge: the server chose that address, not the run's creator.

import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunRecord } from '../storage/storage.ts';
import { isoNow } from '../api/clock.ts';
import type { AddressPolicy } from '../net/address-policy.ts';
import { literalAddress } from '../net/address-policy.ts';

export interface WebhookOptions {
  readonly policy: AddressPolicy;
  /** Time limit of one attempt (connect, send, response headers). */
  readonly timeoutMs: number;
  /** Attempts in all, at least 1. */
  readonly maxAttempts: number;
  /** Pause before the second attempt; doubled for each further one. */
  readonly backoffMs?: number;
  /** This server's own base URL (its listener), for webhooks that are a path; unset before it listens. */
  readonly selfUrl?: () => string | undefined;
}

/** A webhook naming a route of this server: a path, not a URL (`//host` is a URL without scheme). */
export function isServerPath(url: string): boolean {
  return url.startsWith('/') && !url.startsWith('//');
}

export interface WebhookPayload {
  readonly run: RunRecord;
  readonly status: string;
  readonly startedAt: string;
  readonly values?: unknown;
}

/** A delivery the address policy refused: never retried. */
class RefusedDestination extends Error {
  readonly code = 'TP_WEBHOOK_REFUSED';
}

type Attempt = { ok: true } | { ok: false; retry: boolean; error: Error };

/** The URL without its query and fragment, for logs (those often carry tokens). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** A `lookup` for the request's socket: resolves once, checks every address, hands back only checked ones. */
function checkedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(
      hostname,
      { family: options.family, hints: options.hints, all: true },
      (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        for (const entry of addresses) {
          const verdict = policy.check(entry.address);
          if (!verdict.allowed)
            return callback(
              new RefusedDestination(`${hostname} resolves to a refused address: ${verdict.reason}`),
              '',
              0,
            );
        }
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
    );
  };
}

function attempt(url: URL, body: string, options: WebhookOptions, own: boolean): Promise<Attempt> {
  // An IP-address host is connected to as written, without a lookup: check it here.
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && !own) {
    const verdict = options.policy.check(literal);
    if (!verdict.allowed)
      return Promise.resolve({
        ok: false,
        retry: false,
        error: new RefusedDestination(`refused address: ${verdict.reason}`),
      });
  }
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'tracepipe-agent-api',
      },
      // A fresh connection every time: a pooled socket would skip the lookup and its check.
      agent: false,
      ...(own ? {} : { lookup: checkedLookup(options.policy) }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      // The answer's body is of no use; do not read it.
      response.destroy();
      if (status >= 200 && status < 300) resolve({ ok: true });
      else if (status >= 300 && status < 400)
        resolve({ ok: false, retry: false, error: new Error(`HTTP ${status}: redirects are not followed`) });
      else resolve({ ok: false, retry: status === 429 || status >= 500, error: new Error(`HTTP ${status}`) });
    });
    request.on('error', (error) => resolve({ ok: false, retry: !(error instanceof RefusedDestination), error }));
    request.end(body);
  });
}

/** Delivers the webhook; `onFailure` gets the fields to report (it counts and logs). Never rejects. */
export async function sendWebhook(
  url: string,
  payload: WebhookPayload,
  options: WebhookOptions,
  onFailure: (fields: Record<string, unknown>) => void,
): Promise<void> {
  const { error, attempt: _attempt, temporary: _temporary, ...run } = payload.run;
  const body = JSON.stringify({
    ...run,
    status: payload.status,
    run_started_at: payload.startedAt,
    run_ended_at: isoNow(),
    webhook_sent_at: isoNow(),
    ...(payload.values !== undefined ? { values: payload.values } : {}),
    ...(error ? { error: error.message } : {}),
  });
  const own = isServerPath(url);
  let target: URL;
  try {
    const base = own ? options.selfUrl?.() : undefined;
    if (own && base === undefined) throw new Error('the server is not listening');
    target = new URL(url, base);
  } catch (failure) {
    onFailure({ run_id: payload.run.run_id, url: redactUrl(url), attempts: 0, err: failure });
    return;
  }
  const attempts = Math.max(1, options.maxAttempts);
  for (let number = 1; ; number++) {
    const outcome = await attempt(target, body, options, own);
    if (outcome.ok) return;
    if (!outcome.retry || number >= attempts) {
      onFailure({ run_id: payload.run.run_id, url: redactUrl(url), attempts: number, err: outcome.error });
      return;
    }
    // Unreferenced: a pending retry does not keep a stopping process alive.
    await sleep((options.backoffMs ?? 1000) * 2 ** (number - 1), undefined, { ref: false });
  }
}

// One HTTP POST of a ready body, with a per-attempt timeout, reported as an ExportResult rather
// than thrown: 2xx success; 408/425/429/499/5xx, network errors and timeouts retryable (with the
// server's Retry-After); other statuses a failure. Uses a private keep-alive agent per exporter so
// that shutdown can close its sockets instead of leaving them to a global pool.
//
// An upload is made once per batch, so its fixed cost is paid per ~100 runs; it is kept low. The
// request options are worked out once (not from a URL per request), and the attempt's deadline and
// the caller's abort destroy the request directly: handing `http.request` an AbortSignal (and
// making one per attempt, as `withTimeout` does) cost a third of the client's CPU per upload,
// 47 against 32 µs measured (src/exporterhelper/README.md, "Cost of an upload").

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ExportResult } from './retry.ts';
import { classifyHttpStatus, parseRetryAfter } from './retry.ts';
import { TimeoutError } from './timeout.ts';

/** The answer of an attempt, beyond its classification: for logs and for split decisions (see verdict.ts). */
export interface HttpExportResult extends ExportResult {
  /** The start of the response body, for logs (at most 1 KiB). */
  readonly responseText?: string;
}

const MAX_RESPONSE_TEXT = 1024;

export class HttpSender {
  private readonly agent: HttpAgent;
  private readonly url: URL;
  /** What every request shares: where it goes, its method and agent. */
  private readonly target: RequestOptions;
  private readonly request: typeof httpRequest;

  constructor(url: string, maxSockets: number) {
    this.url = new URL(url);
    const options = { keepAlive: true, maxSockets };
    const https = this.url.protocol === 'https:';
    this.agent = https ? new HttpsAgent(options) : new HttpAgent(options);
    this.request = https ? httpsRequest : httpRequest;
    const { protocol, hostname, port, pathname, search, username, password } = this.url;
    this.target = {
      protocol,
      // A bracketed IPv6 literal is a host name without its brackets, as `http.request(url)` passes it.
      hostname: hostname.startsWith('[') ? hostname.slice(1, -1) : hostname,
      ...(port === '' ? {} : { port: Number(port) }),
      path: `${pathname}${search}`,
      ...(username === '' && password === ''
        ? {}
        : { auth: `${decodeURIComponent(username)}:${decodeURIComponent(password)}` }),
      method: 'POST',
      agent: this.agent,
    };
  }

  async post(
    body: Buffer,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<HttpExportResult> {
    try {
      if (signal?.aborted) throw signal.reason;
      const response = await this.send(body, headers, timeoutMs, signal);
      const status = classifyHttpStatus(response.status);
      const retryAfterMs = parseRetryAfter(firstHeader(response.headers['retry-after']));
      return {
        status,
        httpStatus: response.status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(status === 'success' ? {} : { error: new Error(`HTTP ${response.status}`), responseText: response.text }),
      };
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      return { status: 'retryable', error: cause };
    }
  }

  /** Closes idle and active sockets. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * One request; rejects with a TimeoutError when the whole exchange (until the answer's end) takes
   * longer than `timeoutMs`, and with `signal`'s reason when it aborts. Either destroys the request,
   * which frees its socket.
   */
  private send(
    body: Buffer,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = () => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (error: unknown) => {
        if (settled) return;
        settle();
        reject(error);
      };
      const req = this.request(
        { ...this.target, headers: { ...headers, 'Content-Length': body.byteLength } },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            // Read the whole answer so the socket can be reused, but keep only its start.
            if (kept < MAX_RESPONSE_TEXT) {
              chunks.push(chunk);
              kept += chunk.length;
            }
          });
          res.on('end', () => {
            if (settled) return;
            settle();
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: kept === 0 ? '' : Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_TEXT),
            });
          });
          // A request destroyed once its answer has begun ends the answer with an error, or only
          // with `aborted`/`close` (Node versions differ); `fail` ignores what comes after the first.
          res.on('error', fail);
          res.on('close', () => {
            if (!res.complete) fail(new Error('the connection closed before the answer was complete'));
          });
        },
      );
      const timer = setTimeout(() => {
        const error = new TimeoutError(timeoutMs);
        fail(error);
        req.destroy(error);
      }, timeoutMs);
      const onAbort = () => {
        fail(signal!.reason);
        req.destroy(signal!.reason instanceof Error ? signal!.reason : undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', fail);
      req.end(body);
    });
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

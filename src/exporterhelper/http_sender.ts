// One HTTP POST of a ready body, with a per-attempt timeout, reported as an ExportResult rather
// than thrown: 2xx success; 408/425/429/499/5xx, network errors and timeouts retryable (with the
// server's Retry-After); other statuses a failure. Uses a private keep-alive agent per exporter so
// that shutdown can close its sockets instead of leaving them to a global pool.

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ExportResult } from './retry.ts';
import { classifyHttpStatus, parseRetryAfter } from './retry.ts';
import { withTimeout } from './timeout.ts';

/** The answer of an attempt, beyond its classification: for logs and for split decisions (see verdict.ts). */
export interface HttpExportResult extends ExportResult {
  /** The start of the response body, for logs (at most 1 KiB). */
  readonly responseText?: string;
}

const MAX_RESPONSE_TEXT = 1024;

export class HttpSender {
  private readonly agent: HttpAgent;
  private readonly url: URL;

  constructor(url: string, maxSockets: number) {
    this.url = new URL(url);
    const options = { keepAlive: true, maxSockets };
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
  }

  async post(
    body: Buffer,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<HttpExportResult> {
    try {
      const response = await withTimeout((attemptSignal) => this.send(body, headers, attemptSignal), timeoutMs, signal);
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

  private send(
    body: Buffer,
    headers: OutgoingHttpHeaders,
    signal: AbortSignal,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
    const request = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        this.url,
        { method: 'POST', agent: this.agent, signal, headers: { ...headers, 'Content-Length': body.byteLength } },
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
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_TEXT),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

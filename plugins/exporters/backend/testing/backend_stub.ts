// A stand-in for the tracing backend's multipart ingestion endpoint, for tests and benchmarks: a
// real HTTP server on a loopback port that decompresses each zstd body, parses its multipart parts
// strictly, and records the runs it accepted. Its answers are scripted per request.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { decompress } from 'zstd-napi';
import type { Run } from 'tracepipe/plugin';
import { boundaryOf, parseMultipart, runsFromParts } from '../internal/multipart_reader.ts';

export interface StubRequest {
  readonly index: number;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly runs: readonly Run[];
  readonly compressedBytes: number;
  readonly rawBytes: number;
  readonly receivedAt: number;
}

export interface StubAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Wait this long before answering (the client may time out meanwhile). */
  readonly delayMs?: number;
}

export class BackendStub {
  private readonly server: Server;
  readonly requests: StubRequest[] = [];
  /** Runs accepted with a 2xx, by id, with the key they came with. */
  readonly accepted = new Map<string, { run: Run; apiKey: string | undefined }>();
  /** Runs that arrived with a 2xx more than once. */
  duplicates = 0;
  /** Runs accepted in total (duplicates included), and their body sizes. */
  acceptedRuns = 0;
  acceptedRawBytes = 0;
  acceptedCompressedBytes = 0;
  /** Decompressed bodies, in request order (when recording). */
  readonly rawBodies: Buffer[] = [];
  /** Bodies that could not be parsed: any entry is a bug in the exporter. */
  readonly malformed: string[] = [];
  answer: (request: StubRequest) => StubAnswer = () => ({ status: 202 });
  private waiters: { predicate: () => boolean; resolve: () => void }[] = [];

  /** `record: false` keeps only counts (for benchmarks: no per-run memory). */
  constructor(private readonly options: { record?: boolean } = {}) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void (async () => {
          const compressed = Buffer.concat(chunks);
          let runs: Run[] = [];
          let raw = 0;
          let body: Buffer | undefined;
          try {
            if (req.headers['content-encoding'] !== 'zstd') throw new Error('body is not zstd');
            body = decompress(compressed);
            raw = body.length;
            runs = runsFromParts(parseMultipart(body, boundaryOf(req.headers['content-type'])));
          } catch (error) {
            this.malformed.push(String(error));
            res.writeHead(400).end(String(error));
            return;
          }
          const request: StubRequest = {
            index: this.requests.length,
            path: req.url ?? '',
            headers: req.headers,
            runs,
            compressedBytes: compressed.length,
            rawBytes: raw,
            receivedAt: Date.now(),
          };
          if (this.options.record !== false) {
            this.requests.push(request);
            this.rawBodies.push(body);
          }
          const answer = this.answer(request);
          if (answer.delayMs) await sleep(answer.delayMs);
          if (res.destroyed || req.socket.destroyed) return; // The client gave up (timeout).
          if (answer.status >= 200 && answer.status < 300) {
            this.acceptedRuns += runs.length;
            this.acceptedRawBytes += raw;
            this.acceptedCompressedBytes += compressed.length;
            if (this.options.record === false) runs = [];
            for (const run of runs) {
              if (this.accepted.has(run.id)) this.duplicates++;
              this.accepted.set(run.id, { run, apiKey: req.headers['x-api-key'] as string | undefined });
            }
          }
          res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
          this.notify();
        })();
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once `predicate` holds (checked after each answered request). */
  async waitFor(predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('BackendStub.waitFor timed out')), timeoutMs);
      this.waiters.push({ predicate, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  private notify(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.predicate()) return true;
      waiter.resolve();
      return false;
    });
  }
}

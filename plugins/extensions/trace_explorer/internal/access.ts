// Who may use the explorer's API. Traces hold every run's inputs and outputs, so the explorer is
// protected by whatever protects the agent server whose runs it shows: that server puts it behind
// its own authentication while the service is built (`guardWith`) and arms the guard once it has
// loaded its API keys and custom auth handler. Until then the API answers 503; an explorer that
// nobody protects and that listens beyond loopback refuses to start unless configured `insecure`.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendHttpError } from 'tracepipe/confighttp';
import type { TraceAccessCheck, TraceViewerGuard } from 'tracepipe/plugin';
import { ExplorerUnavailableError, sendCodedError } from '../errors.ts';

/** Retry-After while the owner of the guard has not started yet, in seconds. */
const NOT_ARMED_RETRY_AFTER_S = 1;

/** Paths that hold no data: the pages and their scripts (what they load is checked). */
const isPublic = (path: string): boolean => path === '/' || path === '/ui' || path.startsWith('/ui/');

export class ExplorerAccess {
  /** Who guards the explorer (the component ids that called `guardWith`). */
  private readonly owners: string[] = [];
  /** undefined: not armed yet (when owned); null: armed, without authentication. */
  private check: TraceAccessCheck | null | undefined;

  constructor(
    /** Reachable from other machines (not a loopback bind). */
    private readonly exposed: boolean,
    private readonly insecure: boolean,
  ) {}

  get guarded(): boolean {
    return this.owners.length > 0;
  }

  guardWith(owner: string): TraceViewerGuard {
    this.owners.push(owner);
    return {
      arm: (check) => {
        if (!check && this.exposed && !this.insecure) {
          throw new Error(
            `the trace explorer listens beyond loopback and ${owner} has no authentication to protect it: set ${owner}'s auth (API keys or a custom auth handler), bind the explorer to 127.0.0.1, or set the explorer's insecure: true`,
          );
        }
        // Several owners: the last one armed decides (one agent server per process is the norm).
        this.check = check ?? null;
      },
    };
  }

  /** Throws when the explorer may not start: exposed, unguarded and not `insecure`. */
  checkStart(host: string): void {
    if (this.exposed && !this.guarded && !this.insecure) {
      throw new Error(
        `the trace explorer would serve every trace without authentication on ${host}: run it beside an agent server with auth, bind it to 127.0.0.1, or set insecure: true`,
      );
    }
  }

  /** Checks every request but those for the pages' files. */
  register(app: FastifyInstance): void {
    app.addHook('onRequest', async (request, reply) => {
      if (!this.guarded) return;
      const path = request.url.split('?')[0]!;
      if (isPublic(path)) return;
      if (this.check === undefined) {
        return sendCodedError(reply, new ExplorerUnavailableError(['the trace explorer is starting; retry shortly']), {
          headers: { 'retry-after': String(NOT_ARMED_RETRY_AFTER_S) },
        });
      }
      if (this.check === null) return;
      const refusal = await this.check({ method: request.method, url: request.url, headers: request.headers });
      if (refusal) return refuse(reply, refusal.statusCode, refusal.code, refusal.message, refusal.headers);
    });
  }
}

function refuse(
  reply: FastifyReply,
  statusCode: number,
  code: string,
  message: string,
  headers: Readonly<Record<string, string>> = {},
) {
  return sendHttpError(reply, statusCode, message, { fields: { code }, headers: { ...headers } });
}

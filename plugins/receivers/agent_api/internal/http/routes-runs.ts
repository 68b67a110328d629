// Run routes, on a thread and threadless: create in the background, stream (SSE), wait, list,
// get, join, join the stream (replaying after `Last-Event-ID`), cancel, delete, and batch.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { BrokerUnavailableError } from '../runs/broker.ts';
import { describeError } from '../runs/graph-runner.ts';
import type { Run, RunRecord } from '../storage/storage.ts';
import { authorizeRun, authorizeThread, createRun } from './access.ts';
import { isTrue, requestParameter, withoutNulls } from './request-body.ts';
import {
  cancelQuery,
  joinStreamQuery,
  runBatch,
  runCreate,
  runIdParams,
  runListQuery,
  threadIdParams,
  threadlessRunParams,
} from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';
import { openEventStream, writeSSE } from './sse.ts';
import { ThreadRunQueue } from './thread-run-queue.ts';
import { ApiNotFoundError } from '../../errors.ts';

type RunCreateBody = FromSchema<typeof runCreate>;

/** The public run record: the API's fields only, none of the server's bookkeeping. */
/**
 * How often an idle thread stream looks at the thread itself: for an announcement that was lost
 * (a shared broker's connection dropped) and for the thread's deletion, which ends the stream.
 */
const THREAD_STREAM_LOOK_MS = 2000;

export function publicRun(run: RunRecord): Run {
  const { error: _error, attempt: _attempt, temporary: _temporary, ...rest } = run;
  return rest;
}

function contentLocation(run: RunRecord, threadless: boolean): string {
  return threadless ? `/runs/${run.run_id}` : `/threads/${run.thread_id}/runs/${run.run_id}`;
}

/**
 * Which of a run's events a stream joined with `stream_mode` in its query sends: the events of
 * those modes (`values|<namespace>` of subgraphs included), and `metadata` and `error` always; all
 * of them when the query names none.
 */
function streamModeFilter(query: unknown): (event: string) => boolean {
  const modes = parseStreamModes(requestParameter(query, 'stream_mode'));
  return (event) =>
    modes.length === 0 || event === 'metadata' || event === 'error' || modes.includes(event.split('|')[0]!);
}

/** `stream_mode` as a query parameter: repeated, comma-separated, or a JSON array (the JS SDK's). */
function parseStreamModes(value: string | string[] | undefined): string[] {
  const parts = ([] as string[]).concat(value ?? []);
  return parts.flatMap((part) => {
    if (part.trim().startsWith('[')) {
      try {
        return (JSON.parse(part) as unknown[]).map(String);
      } catch {
        return [part];
      }
    }
    return part
      .split(',')
      .map((mode) => mode.trim())
      .filter(Boolean);
  });
}

function lastEventId(request: FastifyRequest): number {
  const header = request.headers['last-event-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^-?\d+$/.test(value.trim()) ? Number(value) : -1;
}

export function registerRunRoutes(app: AgentApp, services: AgentServices): void {
  const { runs, broker, coordinator } = services;

  /** Refuses a stream (503, `Retry-After`) while the shared broker is unreachable, before any byte is sent. */
  function assertStreamable(): void {
    if (!broker.available())
      throw new BrokerUnavailableError('The run event broker (Redis) is unreachable; retry the stream shortly.');
  }

  /** Ends a hijacked response; while the server stops, also its connection (Fastify no longer can). */
  function endResponse(raw: FastifyReply['raw'], body?: string): void {
    if (raw.destroyed || raw.writableEnded) return;
    if (services.closing()) raw.end(body ?? '', () => raw.socket?.destroy());
    else raw.end(body);
  }

  /** Starts an SSE response that owns the socket from here on; returns a signal for disconnects. */
  function openStream(reply: FastifyReply, headers: Record<string, string>): { signal: AbortSignal; end(): void } {
    // The headers leave at once: a client waiting on a run that has not started must see the stream open.
    const { raw, stopHeartbeat } = openEventStream(reply, services.heartbeatMs, headers);
    const controller = new AbortController();
    raw.on('close', () => {
      if (!raw.writableFinished) controller.abort('disconnected');
    });
    return {
      signal: controller.signal,
      end: () => {
        stopHeartbeat();
        endResponse(raw);
      },
    };
  }

  /** Sends the run's events after `afterId` until the run ends or the client goes. */
  async function pipeRun(
    reply: FastifyReply,
    run: RunRecord,
    afterId: number,
    headers: Record<string, string>,
    onDisconnect?: () => Promise<void>,
    wanted: (event: string) => boolean = () => true,
  ) {
    assertStreamable();
    const stream = openStream(reply, headers);
    try {
      for await (const event of broker.subscribe(run.run_id, afterId, stream.signal)) {
        if (wanted(event.event)) await writeSSE(reply.raw, { event: event.event, data: event.data, id: event.id });
      }
    } catch (error) {
      services.logger.warn({ run_id: run.run_id, err: error }, 'A run stream failed.');
      await writeSSE(reply.raw, { event: 'error', data: describeError(error) }).catch(() => undefined);
    } finally {
      stream.end();
    }
    if (stream.signal.aborted && onDisconnect) {
      await onDisconnect().catch((error) =>
        services.logger.warn({ run_id: run.run_id, err: error }, 'Could not cancel a run after its client left.'),
      );
    }
  }

  // --- background runs -------------------------------------------------------------------------
  app.post(
    '/threads/:thread_id/runs',
    { schema: { params: threadIdParams, body: runCreate } },
    async (request, reply) => {
      const run = await createRun(services, request, request.params.thread_id, withoutNulls(request.body));
      reply.header('content-location', contentLocation(run, false));
      return publicRun(run);
    },
  );

  app.post('/runs', { schema: { body: runCreate } }, async (request, reply) => {
    const run = await createRun(services, request, undefined, withoutNulls(request.body));
    reply.header('content-location', contentLocation(run, true));
    return publicRun(run);
  });

  app.post('/runs/batch', { schema: { body: runBatch } }, async (request) => {
    const created: Run[] = [];
    for (const body of request.body)
      created.push(publicRun(await createRun(services, request, undefined, withoutNulls(body))));
    return created;
  });

  // --- streamed runs ---------------------------------------------------------------------------
  /** A thread's run when `threadId` is given, else a threadless one. */
  async function streamRun(
    request: FastifyRequest,
    reply: FastifyReply,
    threadId: string | undefined,
    requestBody: RunCreateBody,
  ): Promise<void> {
    const body = withoutNulls(requestBody);
    // Checked before the run exists, so that a refused stream leaves no run behind.
    assertStreamable();
    const run = await createRun(services, request, threadId, body);
    const location = contentLocation(run, threadId === undefined);
    const onDisconnect = body.on_disconnect === 'cancel' ? () => runs.cancelIfActive(run.run_id) : undefined;
    await pipeRun(reply, run, -1, { 'content-location': location, location: `${location}/stream` }, onDisconnect);
  }
  app.post(
    '/threads/:thread_id/runs/stream',
    { schema: { params: threadIdParams, body: runCreate } },
    async (request, reply) => streamRun(request, reply, request.params.thread_id, request.body),
  );
  app.post('/runs/stream', { schema: { body: runCreate } }, async (request, reply) =>
    streamRun(request, reply, undefined, request.body),
  );

  // --- wait ------------------------------------------------------------------------------------
  /** A thread's run when `threadId` is given, else a threadless one. */
  async function waitRun(
    request: FastifyRequest,
    reply: FastifyReply,
    threadId: string | undefined,
    requestBody: RunCreateBody,
  ): Promise<void> {
    const threadless = threadId === undefined;
    const body = withoutNulls(requestBody);
    const run = await createRun(services, request, threadId, body);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'application/json',
      'content-location': contentLocation(run, threadless),
    });
    const controller = new AbortController();
    raw.on('close', () => {
      if (!raw.writableFinished) controller.abort('disconnected');
    });
    // Whitespace before the JSON keeps proxies from timing out a long wait; JSON parsers skip it.
    const keepAlive = setInterval(() => raw.write('\n'), 1000);
    keepAlive.unref();
    try {
      await coordinator.waitFor(run.run_id, controller.signal);
      if (controller.signal.aborted) {
        if (body.on_disconnect === 'cancel') await runs.cancelIfActive(run.run_id);
        return;
      }
      endResponse(raw, JSON.stringify(await coordinator.result(run.run_id, threadless ? undefined : run.thread_id)));
    } catch (error) {
      endResponse(raw, JSON.stringify({ __error__: describeError(error) }));
    } finally {
      clearInterval(keepAlive);
    }
  }
  app.post(
    '/threads/:thread_id/runs/wait',
    { schema: { params: threadIdParams, body: runCreate } },
    async (request, reply) => waitRun(request, reply, request.params.thread_id, request.body),
  );
  app.post('/runs/wait', { schema: { body: runCreate } }, async (request, reply) =>
    waitRun(request, reply, undefined, request.body),
  );

  // --- reads -----------------------------------------------------------------------------------
  app.get(
    '/threads/:thread_id/runs',
    { schema: { params: threadIdParams, querystring: runListQuery } },
    async (request) => {
      await authorizeThread(services, request, 'threads:read', request.params.thread_id);
      const list = await runs.list(request.params.thread_id, request.query);
      return list.map(publicRun);
    },
  );

  app.get('/threads/:thread_id/runs/:run_id', { schema: { params: runIdParams } }, async (request) => {
    const { params } = request;
    return publicRun(
      (await authorizeRun(services, request, 'threads:read', params.thread_id, params.run_id)) ??
        (await runs.get(params.thread_id, params.run_id)),
    );
  });

  app.get('/threads/:thread_id/runs/:run_id/join', { schema: { params: runIdParams } }, async (request) => {
    const { params } = request;
    const run =
      (await authorizeRun(services, request, 'threads:read', params.thread_id, params.run_id)) ??
      (await runs.get(params.thread_id, params.run_id));
    const controller = new AbortController();
    request.raw.on('close', () => controller.abort());
    await coordinator.waitFor(run.run_id, controller.signal);
    return coordinator.result(run.run_id, run.thread_id);
  });

  /** A thread's run when `threadId` is given, else a threadless one. */
  async function joinStream(
    request: FastifyRequest,
    reply: FastifyReply,
    threadId: string | undefined,
    runId: string,
    query: FromSchema<typeof joinStreamQuery>,
  ): Promise<void> {
    let run: RunRecord;
    try {
      run =
        (await authorizeRun(services, request, 'threads:read', threadId, runId)) ?? (await runs.get(threadId, runId));
    } catch (error) {
      // Under a custom auth handler, as on the reference server: a run this user may not see (or
      // that does not exist: the same answer, so nothing tells the two apart) opens the stream
      // and ends it with one error event.
      if (!services.access.enabled || !(error instanceof ApiNotFoundError)) throw error;
      const stream = openStream(reply, {});
      await writeSSE(reply.raw, { event: 'error', data: { error: 'Error', message: '404: Thread not found' } });
      stream.end();
      return;
    }
    const onDisconnect = isTrue(query.cancel_on_disconnect) ? () => runs.cancelIfActive(run.run_id) : undefined;
    await pipeRun(reply, run, lastEventId(request), {}, onDisconnect, streamModeFilter(request.query));
  }
  app.get(
    '/threads/:thread_id/runs/:run_id/stream',
    { schema: { params: runIdParams, querystring: joinStreamQuery } },
    async (request, reply) =>
      joinStream(request, reply, request.params.thread_id, request.params.run_id, request.query),
  );
  app.get(
    '/runs/:run_id/stream',
    { schema: { params: threadlessRunParams, querystring: joinStreamQuery } },
    async (request, reply) => joinStream(request, reply, undefined, request.params.run_id, request.query),
  );

  // A thread's stream: the events of every run on the thread, the ones in flight now and those
  // started later, until the client leaves. Event ids are `<run_id>:<position>`, so a reconnect
  // with `Last-Event-ID` resumes inside the run it names and skips the runs before it. The thread's
  // runs are read once, when the client connects; the runs created later are announced by the
  // broker (on whichever instance they were created), and a slow look at the thread's runs in flight
  // catches an announcement that was lost and ends the stream once the thread is deleted.
  app.get('/threads/:thread_id/stream', { schema: { params: threadIdParams } }, async (request, reply) => {
    const threadId = request.params.thread_id;
    if (!(await authorizeThread(services, request, 'threads:read', threadId)).thread)
      await services.threads.get(threadId);
    const header = request.headers['last-event-id'];
    const [lastRun, lastSeq] = (typeof header === 'string' ? header : '').split(':');
    assertStreamable();
    const wanted = streamModeFilter(request.query);
    const stream = openStream(reply, {});
    const runs = new ThreadRunQueue();
    // Listening before the runs are read: a run created in between is announced, not missed.
    const stopWatching = await broker.watchThread(threadId, (runId) => runs.add(runId));
    try {
      let resumeAfter = lastRun && /^\d+$/.test(lastSeq ?? '') ? { runId: lastRun, seq: Number(lastSeq) } : undefined;
      const resumed = resumeAfter ? await services.runs.idsOfThread(threadId) : undefined;
      if (resumed?.includes(resumeAfter!.runId)) {
        // Runs before the one the client last saw are done for it; that one and later ones are not.
        let before = true;
        for (const runId of resumed) {
          if (runId === resumeAfter!.runId) before = false;
          if (before) runs.skip(runId);
          else runs.add(runId);
        }
      } else {
        // A new reader starts with what is in flight; finished runs are history, not stream.
        resumeAfter = undefined;
        for (const runId of (await services.runs.inflightIds(threadId)) ?? []) runs.add(runId);
      }
      while (!stream.signal.aborted && !services.closing()) {
        const next = runs.next();
        if (!next) {
          if (await runs.announced(THREAD_STREAM_LOOK_MS, stream.signal)) continue;
          if (stream.signal.aborted) break;
          const inflight = await services.runs.inflightIds(threadId);
          if (!inflight) break;
          for (const runId of inflight) runs.add(runId);
          continue;
        }
        const after = next === resumeAfter?.runId ? resumeAfter.seq : -1;
        resumeAfter = undefined;
        for await (const event of broker.subscribe(next, after, stream.signal)) {
          if (wanted(event.event))
            await writeSSE(reply.raw, { event: event.event, data: event.data, id: `${next}:${event.id}` });
        }
      }
    } finally {
      stopWatching();
      stream.end();
    }
  });

  // --- cancel and delete -----------------------------------------------------------------------
  app.post(
    '/threads/:thread_id/runs/:run_id/cancel',
    { schema: { params: runIdParams, querystring: cancelQuery } },
    async (request, reply) => {
      const { params, query } = request;
      const wait = isTrue(query.wait);
      await authorizeRun(services, request, 'threads:update', params.thread_id, params.run_id, {
        thread_id: params.thread_id,
        action: query.action ?? 'interrupt',
      });
      await runs.cancel(params.thread_id, params.run_id, query.action ?? 'interrupt', wait);
      return reply.code(wait ? 204 : 202).send();
    },
  );

  app.delete('/threads/:thread_id/runs/:run_id', { schema: { params: runIdParams } }, async (request, reply) => {
    const { params } = request;
    await authorizeRun(services, request, 'threads:delete', params.thread_id, params.run_id, {
      thread_id: params.thread_id,
      run_id: params.run_id,
    });
    await runs.delete(params.thread_id, params.run_id);
    return reply.code(204).send();
  });
}

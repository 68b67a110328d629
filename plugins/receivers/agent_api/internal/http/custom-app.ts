// langgraph.json's `http.app`: the deployment's own Hono app, in front of the API as on the
// LangGraph platform. Its routes are served beside the API's (`/custom/...`), and its middleware
// runs around every request: it may answer instead of the API (a short-circuit), read the body
// first (`await c.req.json()`; the API then receives it as it was sent), and set headers on the
// API's answers after `await next()`.
//
// The app sits behind the request guard (host check, CORS, cross-site, JSON-only, authentication:
// those are `onRequest` hooks, which run first), so its routes are protected as the API's are.
// It runs in a `preParsing` hook, where the body is still unread: the request goes through a Hono
// app of ours holding the user's routes and, last, a pass-through route. When the user's app
// answers, that answer is sent. When the request reaches the pass-through, Fastify goes on to its
// route with the body (handed on from what the middleware read, if it read it), and the headers the
// middleware set after `next()` are put on the answer. What a middleware sees of the API's answer
// in `c.res` is a placeholder (status 200, no body): it can add headers, not read the answer.

import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { toFetchRequest } from './request-guard.ts';

/** What is needed of the user's app: Hono's route table (`app.route()` mounts it). */
type HonoLike = Parameters<Hono['route']>[1];

function isHonoApp(value: unknown): value is HonoLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { routes?: unknown }).routes) &&
    typeof (value as { fetch?: unknown }).fetch === 'function'
  );
}

/** Imports `http.app`; throws a message naming the module when the export is not a Hono app. */
export async function loadCustomApp(spec: { path: string; exportName: string }): Promise<HonoLike> {
  const where = `http.app ${spec.path}:${spec.exportName}`;
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(spec.path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`${where}: import failed: ${(error as Error).message}`, { cause: error });
  }
  const exported = await module[spec.exportName];
  if (!isHonoApp(exported)) {
    const available = Object.keys(module).filter((key) => key !== '__esModule');
    throw new Error(
      exported === undefined
        ? `${where}: the module has no export "${spec.exportName}" (exports: ${available.join(', ') || 'none'})`
        : `${where}: the export is not a Hono app`,
    );
  }
  return exported;
}

/** Marks the answer of the pass-through route: the API answers this request. */
const PASS_THROUGH = 'x-tracepipe-pass-through';

/** A request body that is read only if the app asks for it (`started` then says so). */
function lazyBody(payload: Readable): { stream: ReadableStream<Uint8Array>; started: () => boolean } {
  let started = false;
  let iterator: AsyncIterator<Buffer> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        started = true;
        iterator ??= payload[Symbol.asyncIterator]();
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      },
    },
    // 0: nothing is pulled before the app reads; an untouched body stays in the socket for Fastify.
    { highWaterMark: 0 },
  );
  return { stream, started: () => started };
}

/**
 * The body the middleware read, to pass on to the API. Hono keeps what was read (`c.req.json()`
 * reads and keeps the text), and `text()` hands it back; a body read some other way (the raw
 * stream) is gone, and what is left of it is passed on.
 */
async function bodyLeftBy(c: Context): Promise<Buffer> {
  if (Object.keys(c.req.bodyCache).length > 0) return Buffer.from(await c.req.text());
  return Buffer.from(await c.req.raw.arrayBuffer().catch(() => new ArrayBuffer(0)));
}

/** Writes `response` as the reply, with the headers the guard already set (CORS). */
function sendResponse(reply: FastifyReply, response: Response): void {
  reply.hijack();
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value;
  response.headers.forEach((value, name) => {
    if (name !== PASS_THROUGH && name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  reply.raw.writeHead(response.status, headers);
  if (!response.body) {
    reply.raw.end();
    return;
  }
  const body = Readable.fromWeb(response.body as Parameters<typeof Readable.fromWeb>[0]);
  body.on('error', () => reply.raw.destroy());
  reply.raw.on('close', () => body.destroy());
  body.pipe(reply.raw);
}

/** Mounts `userApp` in front of the API routes of `app` (call after the request guard). */
export function registerCustomApp(app: FastifyInstance, userApp: HonoLike): void {
  const front = new Hono();
  front.route('/', userApp);
  const passed = new WeakMap<Request, { body?: Buffer }>();
  front.all('*', async (c) => {
    const touched = (c.env as { bodyStarted?: () => boolean } | undefined)?.bodyStarted?.() ?? false;
    passed.set(c.req.raw, touched ? { body: await bodyLeftBy(c) } : {});
    return c.body(null, 200, { [PASS_THROUGH]: '1' });
  });

  app.addHook('preParsing', async (request: FastifyRequest, reply: FastifyReply, payload: Readable) => {
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const head = toFetchRequest(request);
    const body = hasBody ? lazyBody(payload) : undefined;
    const webRequest = body
      ? new Request(head, { body: body.stream, duplex: 'half' } as RequestInit & { duplex: 'half' })
      : head;
    const response = await front.fetch(webRequest, { bodyStarted: body?.started });
    const pass = passed.get(webRequest);

    if (!pass || !response.headers.has(PASS_THROUGH)) {
      // The user's app answered (a route of its own, or a middleware that did not call next()).
      // Written here, streamed as it comes: Fastify's send would let the request go on to a route.
      sendResponse(reply, response);
      return undefined;
    }
    // The API answers, with the headers the middleware set after next().
    for (const [name, value] of response.headers) {
      if (name !== PASS_THROUGH && name !== 'content-length' && name !== 'content-type')
        reply.raw.setHeader(name, value);
    }
    if (pass.body === undefined) return payload;
    request.headers['content-length'] = String(pass.body.length);
    delete request.headers['transfer-encoding'];
    return Readable.from([pass.body]);
  });
}

// Cron routes, as `client.crons` calls them: create (threadless or on a thread), get, update,
// delete, search and count. Each operation goes through the custom auth handler's `crons:*` event;
// the filter it returns applies to the cron's metadata, so another user's cron answers as a
// missing one (404).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { v7 as uuid7 } from 'uuid';
import { publicCron } from '../crons/crons.ts';
import { cronCount, cronCreate, cronIdParams, cronPatch, cronSearch, threadCronParams } from '../crons/schemas.ts';
import type { JsonObject } from '../storage/storage.ts';
import { selectFields, setPagination } from './request-body.ts';
import type { AgentServices } from './services.ts';

type CronCreateBody = FromSchema<typeof cronCreate>;

export function registerCronRoutes(app: FastifyInstance, services: AgentServices): void {
  const { access, assistants } = services;
  const crons = services.crons;
  if (!crons) return;

  const create = async (request: FastifyRequest, threadId: string | undefined, body: CronCreateBody) => {
    if (!access.enabled) return crons.create(threadId, body);
    const assistantId = assistants.resolveId(body.assistant_id);
    const value = {
      payload: { ...body } as Record<string, unknown>,
      schedule: body.schedule,
      cron_id: uuid7(),
      thread_id: threadId ?? null,
      user_id: access.user(request)?.user.identity ?? null,
      end_time: body.end_time ?? null,
      metadata: { ...(body.metadata ?? {}) } as Record<string, unknown> | null,
    };
    const threadVisible = await access.authorize(request, 'crons:create', value);
    const assistantVisible = assistants.isSystem(assistantId)
      ? undefined
      : await access.authorize(request, 'assistants:read', { assistant_id: assistantId });
    return crons.create(threadId, body, {
      cronId: value.cron_id,
      metadata: (value.metadata ?? {}) as JsonObject,
      threadVisible,
      assistantVisible,
      auth: access.user(request),
    });
  };

  app.post<{ Body: CronCreateBody }>('/runs/crons', { schema: { body: cronCreate } }, async (request) =>
    publicCron(await create(request, undefined, request.body)),
  );

  app.post<{ Body: CronCreateBody; Params: FromSchema<typeof threadCronParams> }>(
    '/threads/:thread_id/runs/crons',
    { schema: { params: threadCronParams, body: cronCreate } },
    async (request) => publicCron(await create(request, request.params.thread_id, request.body)),
  );

  app.get<{ Params: FromSchema<typeof cronIdParams> }>(
    '/runs/crons/:cron_id',
    { schema: { params: cronIdParams } },
    async (request) => {
      const { cron_id } = request.params;
      const filters = await access.authorize(request, 'crons:read', { cron_id });
      return publicCron(await crons.get(cron_id, filters));
    },
  );

  app.patch<{ Params: FromSchema<typeof cronIdParams>; Body: FromSchema<typeof cronPatch> }>(
    '/runs/crons/:cron_id',
    { schema: { params: cronIdParams, body: cronPatch } },
    async (request) => {
      const { cron_id } = request.params;
      const body = request.body ?? {};
      // As for threads and assistants, the handler sees the metadata and may stamp it (`owner`);
      // what it leaves is what the update merges in.
      const value = {
        cron_id,
        payload: { ...body } as Record<string, unknown>,
        schedule: body.schedule ?? null,
        metadata: (body.metadata ? { ...body.metadata } : undefined) as Record<string, unknown> | null | undefined,
      };
      const filters = await access.authorize(request, 'crons:update', value);
      const metadata = value.metadata ?? body.metadata;
      return publicCron(await crons.update(cron_id, { ...body, ...(metadata ? { metadata } : {}) }, filters));
    },
  );

  app.delete<{ Params: FromSchema<typeof cronIdParams> }>(
    '/runs/crons/:cron_id',
    { schema: { params: cronIdParams } },
    async (request, reply) => {
      const { cron_id } = request.params;
      const filters = await access.authorize(request, 'crons:delete', { cron_id });
      await crons.delete(cron_id, filters);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: FromSchema<typeof cronSearch> }>(
    '/runs/crons/search',
    { schema: { body: cronSearch } },
    async (request, reply) => {
      const body = request.body ?? {};
      const limit = body.limit ?? 10;
      const offset = body.offset ?? 0;
      const filters = await access.authorize(request, 'crons:search', {
        assistant_id: body.assistant_id ?? null,
        thread_id: body.thread_id ?? null,
        limit,
        offset,
      });
      const page = await crons.search(body, filters);
      setPagination(reply, page.total, offset, limit);
      return selectFields(page.items.map(publicCron), body.select ?? undefined);
    },
  );

  app.post<{ Body: FromSchema<typeof cronCount> }>(
    '/runs/crons/count',
    { schema: { body: cronCount } },
    async (request) => {
      const body = request.body ?? {};
      const filters = await access.authorize(request, 'crons:search', {
        assistant_id: body.assistant_id ?? null,
        thread_id: body.thread_id ?? null,
      });
      return crons.count(body, filters);
    },
  );
}

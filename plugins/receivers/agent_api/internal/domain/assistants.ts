// Assistants and their versions: one system assistant per graph, created at start-up with the
// reference's uuid5 id; user assistants with numbered versions of which exactly one is active.
// An update writes a new version from the supplied fields alone and makes it active; `latest`
// makes any earlier version active again (restoring all of its fields); delete removes the
// assistant with every version — a single version cannot be removed.

import type { FromSchema } from 'json-schema-to-ts';
import { v7 as uuid7 } from 'uuid';
import type { RequestPayload, assistantCreate, assistantPatch } from '../api/schemas.ts';
import { systemAssistantId } from '../graphs/registry.ts';
import type { AssistantDefaults } from '../graphs/platform-defaults.ts';
import type { Assistant, AssistantQuery, AssistantVersion, JsonObject, Storage } from '../storage/storage.ts';
import { matchesAuthFilters, requireWritable } from '../auth/filters.ts';
import type { AuthFilters } from '../auth/filters.ts';
import { conflict, invalid, notFound } from '../api/errors.ts';
import { isoNow } from '../api/clock.ts';

/** An assistant's creation parameters: the request body (`assistantCreate` in api/schemas.ts), nulls dropped. */
export type AssistantCreate = RequestPayload<FromSchema<typeof assistantCreate>>;

/** The fields of an assistant's new version: the request body (`assistantPatch`), nulls dropped. */
export type AssistantPatch = RequestPayload<FromSchema<typeof assistantPatch>>;

/** The graphs an assistant may name: the deployment's loaded graphs. */
export interface GraphCatalog {
  ids(): string[];
  has(graphId: string): boolean;
}

export class AssistantService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphCatalog,
    /** Deletes a thread with its runs and checkpoints (used by `delete_threads`). */
    private readonly deleteThread: (threadId: string) => Promise<void>,
    /** Stops the assistant's pending and running runs, so none goes on executing once it is gone. */
    private readonly cancelAssistantRuns: (assistantId: string) => Promise<void> = async () => {},
  ) {}

  /** A graph id stands for its system assistant wherever an assistant id is accepted. */
  resolveId(idOrGraph: string): string {
    return this.graphs.has(idOrGraph) ? systemAssistantId(idOrGraph) : idOrGraph;
  }

  isSystem(assistantId: string): boolean {
    return this.graphs.ids().some((graphId) => systemAssistantId(graphId) === assistantId);
  }

  systemIds(): Set<string> {
    return new Set(this.graphs.ids().map(systemAssistantId));
  }

  /**
   * Creates each graph's system assistant that does not exist yet, with its `defaults` (the
   * deployment's `LANGGRAPH_CONFIG`); an existing one is left as it is.
   */
  async ensureSystemAssistants(defaults: ReadonlyMap<string, AssistantDefaults> = new Map()): Promise<void> {
    for (const graphId of this.graphs.ids()) {
      const graphDefaults = defaults.get(graphId);
      const assistantId = systemAssistantId(graphId);
      await this.storage.transaction(async (tx) => {
        await tx.assistants.lock(assistantId);
        if (await tx.assistants.get(assistantId)) return;
        const now = isoNow();
        await tx.assistants.insert({
          assistant_id: assistantId,
          graph_id: graphId,
          name: graphId,
          description: null,
          version: 1,
          config: graphDefaults?.config ?? {},
          context: graphDefaults?.context ?? {},
          metadata: { created_by: 'system' },
          created_at: now,
          updated_at: now,
        });
      });
    }
  }

  private checkGraph(graphId: string): void {
    if (!this.graphs.has(graphId)) {
      throw invalid(
        `graph_id: no graph named '${graphId}' is deployed (graphs: ${this.graphs.ids().join(', ') || 'none'})`,
      );
    }
  }

  /**
   * Creates the assistant. Under custom auth (`visible`: may this user see an assistant with this
   * metadata?), an existing assistant of that id it may not see is a conflict, never returned
   * (`if_exists: do_nothing` included).
   */
  async create(
    body: AssistantCreate,
    options: { visible?: (metadata: JsonObject) => boolean } = {},
  ): Promise<Assistant> {
    this.checkGraph(body.graph_id);
    const assistantId = body.assistant_id ?? uuid7();
    return this.storage.transaction(async (tx) => {
      await tx.assistants.lock(assistantId);
      const existing = await tx.assistants.get(assistantId);
      if (existing) {
        if (options.visible && !options.visible(existing.metadata))
          throw conflict(`Assistant ${assistantId} already exists`);
        if (body.if_exists === 'do_nothing') return existing;
        throw conflict(`Assistant ${assistantId} already exists`);
      }
      const now = isoNow();
      const assistant: Assistant = {
        assistant_id: assistantId,
        graph_id: body.graph_id,
        name: body.name || 'Untitled',
        description: body.description ?? null,
        version: 1,
        config: body.config ?? {},
        context: body.context ?? {},
        metadata: body.metadata ?? {},
        created_at: now,
        updated_at: now,
      };
      await tx.assistants.insert(assistant);
      return assistant;
    });
  }

  async get(idOrGraph: string): Promise<Assistant> {
    const assistant = await this.storage.assistants.get(this.resolveId(idOrGraph));
    if (!assistant) throw notFound('Assistant not found');
    return assistant;
  }

  /** Whether an assistant has exactly this id (a graph id is not resolved). */
  async exists(assistantId: string): Promise<boolean> {
    return (await this.storage.assistants.get(assistantId)) !== undefined;
  }

  search(query: AssistantQuery) {
    return this.storage.assistants.search(query);
  }

  /**
   * Writes version max+1 from the supplied fields and makes it active. `context`, `config`,
   * `metadata` and `description` take the supplied values or their empty defaults — nothing is
   * carried over from earlier versions. `graph_id` and `name` identify the assistant and are kept
   * when not supplied.
   *
   * Under a custom auth filter (`visible`), an assistant the filter hides is a 404, and the metadata
   * keys the filter names (`owner`) are carried over from the current version when the update does
   * not set them: an update that leaves out the metadata must not hand the assistant to nobody.
   */
  async update(idOrGraph: string, patch: AssistantPatch, options: { visible?: AuthFilters } = {}): Promise<Assistant> {
    if (patch.graph_id !== undefined) this.checkGraph(patch.graph_id);
    const assistantId = this.resolveId(idOrGraph);
    return this.storage.transaction(async (tx) => {
      await tx.assistants.lock(assistantId);
      const current = await tx.assistants.get(assistantId);
      if (!current || !matchesAuthFilters(current.metadata, options.visible)) throw notFound('Assistant not found');
      // As the reference server: a field not sent keeps its value, and metadata sent is merged
      // into the current metadata (keys not sent stay, the auth handler's filter keys included).
      const metadata: JsonObject = { ...current.metadata, ...patch.metadata };
      requireWritable(metadata, options.visible);
      const now = isoNow();
      const next: Assistant = {
        ...current,
        graph_id: patch.graph_id ?? current.graph_id,
        name: patch.name || current.name,
        description: patch.description ?? current.description,
        config: patch.config ?? current.config,
        context: patch.context ?? current.context,
        metadata,
        version: (await tx.assistants.maxVersion(assistantId)) + 1,
        updated_at: now,
      };
      await tx.assistants.insertVersion(versionOf(next, now));
      await tx.assistants.update(next);
      return next;
    });
  }

  /** Makes `version` the active one, with all the fields it was written with. */
  async setLatest(idOrGraph: string, version: number): Promise<Assistant> {
    const assistantId = this.resolveId(idOrGraph);
    return this.storage.transaction(async (tx) => {
      await tx.assistants.lock(assistantId);
      const current = await tx.assistants.get(assistantId);
      if (!current) throw notFound('Assistant not found');
      const row = await tx.assistants.getVersion(assistantId, version);
      if (!row) throw notFound(`Assistant ${idOrGraph} has no version ${version}`);
      const next: Assistant = {
        ...current,
        graph_id: row.graph_id,
        name: row.name,
        description: row.description,
        config: row.config,
        context: row.context,
        metadata: row.metadata,
        version: row.version,
        updated_at: isoNow(),
      };
      await tx.assistants.update(next);
      return next;
    });
  }

  /** Versions, newest first; an empty page is an empty list (404 only for an unknown assistant). */
  async versions(
    idOrGraph: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): Promise<AssistantVersion[]> {
    const assistant = await this.get(idOrGraph);
    return this.storage.assistants.listVersions(assistant.assistant_id, query);
  }

  /**
   * Deletes the assistant, and with `deleteThreads` the threads that ran it — under a custom auth
   * filter only those the user's `threads:delete` filter (`threadsVisible`) lets it delete.
   */
  async delete(
    idOrGraph: string,
    deleteThreads: boolean,
    options: { visible?: AuthFilters; threadsVisible?: AuthFilters } = {},
  ): Promise<string[]> {
    const assistantId = this.resolveId(idOrGraph);
    const assistant = await this.storage.assistants.get(assistantId);
    if (!assistant || !matchesAuthFilters(assistant.metadata, options.visible)) throw notFound('Assistant not found');
    const threadIds: string[] = [];
    for (const threadId of deleteThreads ? await this.storage.threads.idsOfAssistant(assistantId) : []) {
      if (
        !options.threadsVisible ||
        matchesAuthFilters((await this.storage.threads.get(threadId))?.metadata, options.threadsVisible)
      )
        threadIds.push(threadId);
    }
    await this.cancelAssistantRuns(assistantId);
    if (!(await this.storage.assistants.delete(assistantId))) throw notFound('Assistant not found');
    for (const threadId of threadIds) await this.deleteThread(threadId);
    return [assistantId];
  }
}

function versionOf(assistant: Assistant, createdAt: string): AssistantVersion {
  return {
    assistant_id: assistant.assistant_id,
    version: assistant.version,
    graph_id: assistant.graph_id,
    name: assistant.name,
    description: assistant.description,
    config: assistant.config,
    context: assistant.context,
    metadata: assistant.metadata,
    created_at: createdAt,
  };
}

// Assistants and their versions in PostgreSQL. A transaction that writes an assistant (or its
// versions) locks its row first (`lock`), so that such transactions are one at a time per
// assistant; reading an assistant in a transaction locks its row `FOR KEY SHARE` in the same
// statement, so that it stays while runs are created for it.

import type { PoolClient } from 'pg';
import { assistantSearch, versionSearch } from '../search-queries.ts';
import { records } from '../postgres-session.ts';
import type { PostgresSession } from '../postgres-session.ts';
import type { Assistant, AssistantQuery, AssistantRepository, AssistantVersion, JsonObject, Page } from '../storage.ts';

export class PostgresAssistants implements AssistantRepository {
  constructor(private readonly s: PostgresSession) {}

  async lock(assistantId: string): Promise<void> {
    await this.s.lock('assistant', assistantId);
  }

  async get(id: string): Promise<Assistant | undefined> {
    const row = await this.s.lockedRow('assistant', id, 'key share');
    return row && records.toAssistant(row);
  }

  async insert(a: Assistant): Promise<void> {
    await this.s.lock('assistant', a.assistant_id);
    await this.s.write(async (client) => {
      await client.query(
        `INSERT INTO assistants (assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        records.assistantInsert(a),
      );
      await insertVersion(client, a);
    });
  }

  async update(a: Assistant): Promise<void> {
    await this.s.lock('assistant', a.assistant_id);
    await this.s.one((client) =>
      client.query(
        `UPDATE assistants SET graph_id = $1, name = $2, description = $3, version = $4, config = $5, context = $6,
         metadata = $7, updated_at = $8 WHERE assistant_id = $9`,
        records.assistantUpdate(a),
      ),
    );
  }

  async delete(id: string): Promise<boolean> {
    await this.s.lock('assistant', id);
    return this.s.write((client) => deleteAssistant(client, id));
  }

  async search(query: AssistantQuery): Promise<Page<Assistant>> {
    return this.s.page(assistantSearch('postgres', query), records.toAssistant);
  }

  async insertVersion(v: AssistantVersion): Promise<void> {
    await this.s.lock('assistant', v.assistant_id);
    await this.s.one((client) => insertVersion(client, v));
  }

  async getVersion(id: string, version: number): Promise<AssistantVersion | undefined> {
    const [row] = await this.s.rows('SELECT * FROM assistant_versions WHERE assistant_id = $1 AND version = $2', [
      id,
      version,
    ]);
    return row && records.toVersion(row);
  }

  async maxVersion(id: string): Promise<number> {
    await this.s.lock('assistant', id);
    const [row] = await this.s.rows('SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = $1', [id]);
    return Number(row?.v ?? 0);
  }

  async listVersions(
    id: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): Promise<AssistantVersion[]> {
    const { sql, params } = versionSearch('postgres', id, query);
    return (await this.s.rows(sql, params)).map(records.toVersion);
  }
}

async function insertVersion(client: PoolClient, v: AssistantVersion): Promise<void> {
  await client.query(
    `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    records.versionInsert(v),
  );
}

/** Deletes the assistant, its versions, its runs and its crons. */
export async function deleteAssistant(client: PoolClient, id: string): Promise<boolean> {
  await client.query('DELETE FROM assistant_versions WHERE assistant_id = $1', [id]);
  await client.query('DELETE FROM runs WHERE assistant_id = $1', [id]);
  await client.query('DELETE FROM crons WHERE assistant_id = $1', [id]);
  return ((await client.query('DELETE FROM assistants WHERE assistant_id = $1', [id])).rowCount ?? 0) > 0;
}

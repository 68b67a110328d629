// Assistants and their versions in the embedded SQLite database. SQLite runs one transaction at a
// time, so `lock` has nothing to do.

import type { Row } from '../records.ts';
import { assistantSearch, versionSearch } from '../search-queries.ts';
import { records } from '../sqlite-session.ts';
import type { SqliteSession, SqliteStatements } from '../sqlite-session.ts';
import type { Assistant, AssistantQuery, AssistantRepository, AssistantVersion, JsonObject, Page } from '../storage.ts';

export class SqliteAssistants implements AssistantRepository {
  constructor(private readonly session: SqliteSession) {}

  async lock(): Promise<void> {}

  get(id: string): Promise<Assistant | undefined> {
    return this.session.run((sql) => {
      const row = sql.prepare('SELECT * FROM assistants WHERE assistant_id = ?').get(id) as Row | undefined;
      return row && records.toAssistant(row);
    });
  }

  insert(a: Assistant): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `INSERT INTO assistants (assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...records.assistantInsert(a));
      insertVersion(sql, { ...a });
    });
  }

  update(a: Assistant): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `UPDATE assistants SET graph_id = ?, name = ?, description = ?, version = ?, config = ?, context = ?,
           metadata = ?, updated_at = ? WHERE assistant_id = ?`,
        )
        .run(...records.assistantUpdate(a));
    });
  }

  delete(id: string): Promise<boolean> {
    return this.session.run((sql) => deleteAssistant(sql, id));
  }

  search(query: AssistantQuery): Promise<Page<Assistant>> {
    return this.session.run((sql) => sql.page(assistantSearch('sqlite', query), records.toAssistant));
  }

  insertVersion(v: AssistantVersion): Promise<void> {
    return this.session.run((sql) => insertVersion(sql, v));
  }

  getVersion(id: string, version: number): Promise<AssistantVersion | undefined> {
    return this.session.run((sql) => {
      const row = sql
        .prepare('SELECT * FROM assistant_versions WHERE assistant_id = ? AND version = ?')
        .get(id, version) as Row | undefined;
      return row && records.toVersion(row);
    });
  }

  maxVersion(id: string): Promise<number> {
    return this.session.run((sql) => {
      const row = sql.prepare('SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = ?').get(id) as Row;
      return Number(row.v ?? 0);
    });
  }

  listVersions(
    id: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): Promise<AssistantVersion[]> {
    return this.session.run((sql) => {
      const { sql: text, params } = versionSearch('sqlite', id, query);
      return (sql.prepare(text).all(...params) as Row[]).map(records.toVersion);
    });
  }
}

function insertVersion(sql: SqliteStatements, v: AssistantVersion): void {
  sql
    .prepare(
      `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(...records.versionInsert(v));
}

/** Deletes the assistant, its versions and its runs (a trigger deletes its crons). */
export function deleteAssistant(sql: SqliteStatements, id: string): boolean {
  sql.prepare('DELETE FROM assistant_versions WHERE assistant_id = ?').run(id);
  sql.prepare('DELETE FROM runs WHERE assistant_id = ?').run(id);
  return sql.prepare('DELETE FROM assistants WHERE assistant_id = ?').run(id).changes > 0;
}

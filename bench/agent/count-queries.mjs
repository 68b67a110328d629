// Preloaded (`node --import`) into the agent server processes of `cluster.ts --count`: counts the
// SQL statements each process sends — through `pg` (PostgreSQL) or `better-sqlite3` (SQLite) — and
// the commands it sends through `ioredis`, by kind, and writes the totals to
// $TRACEPIPE_BENCH_COUNTS on SIGUSR2, so that the benchmark can take the difference over the
// measured runs. Transactions are counted as their BEGIN (SQLite's `db.transaction()` wrappers,
// which LangGraph's SqliteSaver uses, count as one BEGIN each).

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const out = process.env.TRACEPIPE_BENCH_COUNTS;
const counts = { sql: {}, redis: {} };
const bump = (table, key) => (table[key] = (table[key] ?? 0) + 1);

/** BEGIN, COMMIT, the advisory lock, or the statement's verb and table ("INSERT runs"). */
function sqlKind(text) {
  const sql = String(text)
    .replace(/\s+/g, ' ')
    .replace(/^WITH \w+ AS \(/i, '')
    .trim();
  if (/pg_advisory_xact_lock/i.test(sql)) return 'advisory lock';
  if (/^BEGIN/i.test(sql)) return 'BEGIN';
  const match = /^(\w+)(?:.*?\b(?:INTO|FROM|UPDATE)\s+("?[\w."]+))?/i.exec(sql);
  if (!match) return sql.slice(0, 30);
  const verb = match[1].toUpperCase();
  if (verb === 'UPDATE') return `UPDATE ${/^UPDATE\s+(\w+)/i.exec(sql)?.[1] ?? ''}`;
  return match[2] ? `${verb} ${match[2].replaceAll('"', '').replace(/^public\./, '')}` : verb;
}

const pg = require('pg');
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  bump(counts.sql, sqlKind(typeof config === 'string' ? config : config?.text));
  return query.call(this, config, ...rest);
};

// Only the agent server's own files: the trace explorer's store (the traces of the runs) is another
// component's cost, and PostgreSQL deployments keep it in SQLite too.
const AGENT_FILES = /(^|\/)(agent|checkpoints|store)\.sqlite$/;
const Database = require('better-sqlite3');
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (source, ...rest) {
  const statement = prepare.call(this, source, ...rest);
  if (!AGENT_FILES.test(this.name)) return statement;
  const kind = sqlKind(source);
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statement[method];
    statement[method] = function (...args) {
      bump(counts.sql, kind);
      return original.apply(this, args);
    };
  }
  return statement;
};
const exec = Database.prototype.exec;
Database.prototype.exec = function (source) {
  // Schema set-up is several statements in one string; at run time exec carries BEGIN/COMMIT/ROLLBACK.
  if (AGENT_FILES.test(this.name)) bump(counts.sql, sqlKind(source));
  return exec.call(this, source);
};
const transaction = Database.prototype.transaction;
Database.prototype.transaction = function (fn) {
  const wrapped = transaction.call(this, fn);
  if (!AGENT_FILES.test(this.name)) return wrapped;
  const counted = function (...args) {
    bump(counts.sql, 'BEGIN');
    bump(counts.sql, 'COMMIT');
    return wrapped.apply(this, args);
  };
  for (const variant of ['deferred', 'immediate', 'exclusive']) counted[variant] = wrapped[variant];
  return counted;
};

const Redis = require('ioredis');
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (command, ...rest) {
  bump(counts.redis, String(command?.name ?? '?').toLowerCase());
  return sendCommand.call(this, command, ...rest);
};

process.on('SIGUSR2', () => {
  if (out) writeFileSync(out, JSON.stringify(counts));
});

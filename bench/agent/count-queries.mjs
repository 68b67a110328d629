// Preloaded (`node --import`) into the agent server processes of `cluster.ts --count`: counts the
// SQL statements each process sends through `pg` and the commands it sends through `ioredis`, by
// kind, and writes the totals to $TRACEPIPE_BENCH_COUNTS on SIGUSR2, so that the benchmark can
// take the difference over the measured runs.

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const out = process.env.TRACEPIPE_BENCH_COUNTS;
const counts = { sql: {}, redis: {} };
const bump = (table, key) => (table[key] = (table[key] ?? 0) + 1);

/** BEGIN, COMMIT, the advisory lock, or the statement's verb and table ("INSERT runs"). */
function sqlKind(text) {
  const sql = String(text).replace(/\s+/g, ' ').trim();
  if (/pg_advisory_xact_lock/i.test(sql)) return 'advisory lock';
  const match = /^(\w+)(?:.*?\b(?:INTO|FROM|UPDATE)\s+("?[\w."]+))?/i.exec(sql);
  if (!match) return sql.slice(0, 30);
  const verb = match[1].toUpperCase();
  if (verb === 'UPDATE') return `UPDATE ${/^UPDATE\s+(\w+)/i.exec(sql)?.[1] ?? ''}`;
  return match[2] ? `${verb} ${match[2].replaceAll('"', '')}` : verb;
}

const pg = require('pg');
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  bump(counts.sql, sqlKind(typeof config === 'string' ? config : config?.text));
  return query.call(this, config, ...rest);
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

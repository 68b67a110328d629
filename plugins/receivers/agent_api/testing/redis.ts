// Redis for the tests that need a server (TEST_REDIS_URI, default the machine's): whether one
// answers, its client connections, and deleting a test's keys.

import { Redis } from 'ioredis';
import { requireServiceUnderCi } from './services.ts';

export const TEST_REDIS_URI = process.env.TEST_REDIS_URI ?? 'redis://127.0.0.1:6379';

/**
 * Whether a Redis server answers PING at `uri` (no retries: a missing server answers false at once).
 * In a CI run a missing server fails instead (`requireServiceUnderCi`).
 */
export async function redisAvailable(uri: string = TEST_REDIS_URI): Promise<boolean> {
  const probe = new Redis(uri, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch (error) {
    requireServiceUnderCi('Redis', uri, error);
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Runs `fn` with a connection of its own to `uri`, and closes it. */
async function withRedis<T>(uri: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(uri);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key that starts with `prefix`. */
export function deleteKeys(uri: string, prefix: string): Promise<void> {
  return withRedis(uri, async (redis) => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  });
}

/** One line of CLIENT LIST, as its fields (`id`, `addr`, `name`, ...). */
export type RedisClientInfo = Readonly<Record<string, string | undefined>>;

async function clientList(redis: Redis): Promise<RedisClientInfo[]> {
  return ((await redis.client('LIST')) as string)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      Object.fromEntries(
        line
          .trim()
          .split(' ')
          .map((field) => field.split('=', 2) as [string, string]),
      ),
    );
}

/** The server's client connections (CLIENT LIST). */
export function redisClients(uri: string): Promise<RedisClientInfo[]> {
  return withRedis(uri, clientList);
}

/**
 * Kills, on the server, the client connections `which` selects (as a failover or a network cut
 * would); returns those killed, in CLIENT LIST's order.
 */
export function killRedisClients(uri: string, which: (client: RedisClientInfo) => boolean): Promise<RedisClientInfo[]> {
  return withRedis(uri, async (redis) => {
    const killed: RedisClientInfo[] = [];
    for (const client of (await clientList(redis)).filter(which)) {
      await redis.client('KILL', 'ID', client.id!);
      killed.push(client);
    }
    return killed;
  });
}

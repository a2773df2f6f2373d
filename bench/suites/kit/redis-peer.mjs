/**
 * The Powertools idempotency peer: `makeIdempotent` around the same no-op, `CachePersistenceLayer`
 * on a connected `@redis/client`, keyed on the effect (the Redis servers: `redis-servers.mjs`).
 */
import { randomBytes } from 'node:crypto';
import { count, newCounter } from './guard-load.mjs';
import { driveIds } from './stats.mjs';

export const MEMORY_REDIS_URL = 'redis://127.0.0.1:6379';

export async function connectRedis(url) {
  const { createClient } = await import('@redis/client');
  const client = createClient({
    url,
    socket: { connectTimeout: 2_000, reconnectStrategy: false },
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The peer on the Redis at `url`: the function, its execution counter, and `close()`. */
export async function startPeer(url) {
  const client = await connectRedis(url);
  const { makeIdempotent, IdempotencyConfig } = await import('@aws-lambda-powertools/idempotency');
  const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'effect' });
  // Outside Lambda this is what keeps in-progress records expiring and a concurrent duplicate
  // from taking the record over (REFERENCES.md): the peer at its best.
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 30_000 });
  const counter = newCounter();
  const fn = makeIdempotent(
    async (event) => {
      count(counter, event.effect);
      return { id: `noop_${event.effect}` };
    },
    { persistenceStore: new CachePersistenceLayer({ client }), config },
  );
  return { fn, counter, close: () => client.quit().catch(() => client.destroy?.()) };
}

export function measurePeer(peer, options) {
  return driveIds(options, async (id) => {
    const answer = await peer.fn({ effect: id, requestId: id });
    return answer?.id === `noop_${id}`;
  });
}

/** The storm against the peer: callers refused as "in progress" must retry (not definite). */
export async function peerStorm(peer, callers = 64) {
  const effect = `storm-peer-${randomBytes(6).toString('hex')}`;
  const latencies = [];
  const outcomes = {};
  let indefinite = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      const begin = performance.now();
      try {
        await peer.fn({ effect, requestId: `${effect}-${caller}` });
        outcomes.returned = (outcomes.returned ?? 0) + 1;
      } catch (error) {
        const name = error?.name ?? 'Error';
        outcomes[name] = (outcomes[name] ?? 0) + 1;
        indefinite += 1;
      }
      latencies.push(performance.now() - begin);
    }),
  );
  return {
    effects: peer.counter.byEffect.get(effect) ?? 0,
    latencies,
    outcomes,
    errors: 0,
    indefinite,
    proposals: null,
  };
}

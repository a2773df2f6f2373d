/**
 * The Powertools idempotency peer: `makeIdempotent` around the same no-op, `CachePersistenceLayer`
 * on a connected `@redis/client`, keyed on the effect. Two Redis servers back it: the machine's
 * on 6379 without persistence (started as before if nothing answers), and a durable one the bench
 * starts on a free port with its own directory (`appendonly yes`, `appendfsync always`) and stops.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { count, newCounter } from './guard-load.mjs';
import { drive } from './stats.mjs';

export const MEMORY_REDIS_URL = 'redis://127.0.0.1:6379';

async function connectRedis(url) {
  const { createClient } = await import('@redis/client');
  const client = createClient({
    url,
    socket: { connectTimeout: 2_000, reconnectStrategy: false },
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function waitForRedis(url, what) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const client = await connectRedis(url).catch(() => undefined);
    if (client !== undefined) return client;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not answer on ${url} within 10 s`);
}

/** Makes sure the in-memory Redis answers on 6379, starting a throwaway server if none does. */
export async function ensureMemoryRedis(log) {
  const client = await connectRedis(MEMORY_REDIS_URL).catch(() => undefined);
  if (client !== undefined) {
    await client.quit().catch(() => undefined);
    return;
  }
  log('Redis does not answer on 127.0.0.1:6379; starting redis-server');
  const child = spawn(
    'redis-server',
    [
      ...['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379'],
      ...['--save', '', '--appendonly', 'no'],
      ...['--dir', '/var/lib/redis', '--logfile', '/var/log/redis/ci.log'],
    ],
    { stdio: 'ignore' },
  );
  await new Promise((resolve) => child.once('exit', resolve));
  await (await waitForRedis(MEMORY_REDIS_URL, 'redis-server')).quit();
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the durable Redis: its own port and directory, every write fsynced before the reply
 * (`appendfsync always`), no RDB snapshots. Returns its URL and `stop()`; the server is also
 * killed when this process exits, so a failing suite never leaves it running.
 */
export async function startDurableRedis(dir) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      ...['--bind', '127.0.0.1', '--port', String(port), '--dir', dir],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      ...['--logfile', 'redis.log', '--daemonize', 'no'],
    ],
    { stdio: 'ignore' },
  );
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  const url = `redis://127.0.0.1:${port}`;
  try {
    await (await waitForRedis(url, 'the durable redis-server')).quit();
  } catch (error) {
    kill();
    throw error;
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(timer);
      process.off('exit', kill);
    },
  };
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

export function measurePeer(peer, { concurrency, durationMs, maxCalls, label }) {
  const nonce = randomBytes(4).toString('hex');
  return drive({
    concurrency,
    durationMs,
    maxCalls,
    call: async (sequence) => {
      const id = `${label}-${nonce}-${sequence}`;
      const answer = await peer.fn({ effect: id, requestId: id });
      return answer?.id === `noop_${id}`;
    },
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

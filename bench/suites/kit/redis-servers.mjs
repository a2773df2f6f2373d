/**
 * The Redis servers behind the peer: the machine's on 6379 without persistence (started as
 * before if nothing answers), and a durable one the suite starts on a free port with its own
 * directory (`appendonly yes`, `appendfsync always`) and stops (decision 118).
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { freePort } from '../gateway.mjs';
import { connectRedis, MEMORY_REDIS_URL } from './redis-peer.mjs';

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

/**
 * A contender's own process (forked by `contenders.mjs`): a Sideguard store behind a guard, the
 * Powertools peer on a Redis, or bare PostgreSQL insert transactions, driven by the parent over
 * IPC so its peak RSS and CPU are its own and contenders never share a heap.
 */
import { createDevelopmentKeyRing, createGuard, createMemoryStore } from '../../../dist/index.js';
import { createPostgresStore } from '../../../dist/stores/postgres/index.js';
import { createSqliteStore } from '../../../dist/stores/sqlite/index.js';
import { measureGuard, newCounter, noopAction, storm } from './guard-load.mjs';
import { openBareInserts, POSTGRES_URL } from './postgres-bare.mjs';
import { measurePeer, peerStorm, startPeer } from './redis-peer.mjs';

/** Untimed calls before each measurement of a contender that connects per use. */
const CONNECTED_WARMUP_MS = 150;

/**
 * PostgreSQL contenders hold their connections only while measured (the server allows 100, and
 * 4 × 16 store connections plus 4 × 16 bare ones would exceed it): each measurement or storm
 * opens the store (or the bare clients), warms its connections untimed, runs, and closes.
 */
async function connectedPerUse(openOnce) {
  await (await openOnce()).close(); // migrates the schema once, when the worker starts
  const using = async (use) => {
    const contender = await openOnce();
    try {
      return await use(contender);
    } finally {
      await contender.close();
    }
  };
  return {
    measure: (options) =>
      using(async (contender) => {
        await contender.measure({
          ...options,
          durationMs: Math.min(CONNECTED_WARMUP_MS, options.durationMs),
          label: `${options.label}-warm`,
        });
        return contender.measure(options);
      }),
    storm: (label) => using((contender) => contender.storm(label)),
    close: async () => {},
  };
}

/** A guard on `store` (or a fresh memory store per use): `{ measure, storm, close }`. */
function guardContender(newGuard, close) {
  const counter = newCounter();
  const action = noopAction(counter);
  return {
    measure: (options) => measureGuard(newGuard(), action, options),
    storm: (label) => storm(newGuard(), action, counter, label),
    close,
  };
}

/** Opens the contender `spec` describes: `{ measure, storm, close }`. */
async function openContender(spec) {
  const keyRing = createDevelopmentKeyRing();
  switch (spec.kind) {
    case 'peer': {
      const peer = await startPeer(spec.redisUrl);
      return {
        measure: (options) => measurePeer(peer, options),
        storm: () => peerStorm(peer),
        close: peer.close,
      };
    }
    case 'pgbare':
      return connectedPerUse(async () => openBareInserts(spec));
    case 'memory':
      // A fresh store per measurement, so memory stays bounded by one measurement.
      return guardContender(
        () => createGuard({ store: createMemoryStore(), keyRing }),
        async () => {},
      );
    case 'sqlite': {
      const store = createSqliteStore({ path: spec.path, synchronous: spec.synchronous });
      const guard = createGuard({ store, keyRing });
      return guardContender(
        () => guard,
        () => store.close(),
      );
    }
    case 'postgres':
      return connectedPerUse(async () => {
        const store = await createPostgresStore({
          connectionString: POSTGRES_URL,
          schema: spec.schema,
          maxConnections: spec.connections,
        });
        const guard = createGuard({ store, keyRing });
        return guardContender(
          () => guard,
          () => store.close(),
        );
      });
    default:
      throw new Error(`unknown contender kind ${spec.kind}`);
  }
}

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const opening = performance.now();
  const contender = await openContender(spec);
  const openMs = performance.now() - opening;
  process.on('message', async (message) => {
    try {
      // Collect the previous measurement's garbage first (forked with --expose-gc).
      globalThis.gc?.();
      if (message.kind === 'measure') {
        const result = await contender.measure({
          ...message,
          label: `${message.label}-${process.pid}`,
        });
        process.send({ kind: 'measured', result });
      } else if (message.kind === 'storms') {
        const storms = [];
        for (let index = 0; index < message.count; index += 1)
          storms.push(await contender.storm(`${message.label}-${index}`));
        process.send({ kind: 'stormed', storms });
      } else if (message.kind === 'exit') {
        await contender.close();
        const maxRssMb = process.resourceUsage().maxRSS / 1024;
        process.send({ kind: 'exited', maxRssMb }, () => process.exit(0));
      }
    } catch (error) {
      process.send({
        kind: 'failed',
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  });
  process.send({ kind: 'ready', openMs });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

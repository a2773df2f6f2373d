#!/usr/bin/env node
/**
 * How a fresh guard process warms up (issue 14): CPU µs per action of `guard.run` (the stores
 * suite's no-op action, c1) in consecutive blocks of actions, on the memory or the PostgreSQL
 * store. A falling curve over the first blocks is V8 optimising by work done (compare with
 * `node --no-opt`); the benches' warm-ups are counted in actions for that reason. A
 * measurement, never a test.
 *
 *   node bench/warm-up-curve.mjs [memory|postgres] [--block 100] [--blocks 20] [--dist <dist/>]
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { newCounter, noopAction } from './suites/kit/guard-load.mjs';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    block: { type: 'string', default: '100' },
    blocks: { type: 'string', default: '20' },
    dist: { type: 'string', default: resolve(fileURLToPath(import.meta.url), '..', '..', 'dist') },
  },
});
const kind = positionals[0] ?? 'postgres';
const block = Number(flags.block);
const dist = resolve(flags.dist);
const api = await import(pathToFileURL(`${dist}/index.js`).href);
const schema = `sg_warm_${randomBytes(4).toString('hex')}`;
const store =
  kind === 'postgres'
    ? await (
        await import(pathToFileURL(`${dist}/stores/postgres/index.js`).href)
      ).createPostgresStore({
        connectionString: URL,
        schema,
        maxConnections: 10,
      })
    : api.createMemoryStore();
const guard = api.createGuard({ store, keyRing: api.createDevelopmentKeyRing() });
const action = noopAction(newCounter());
let sequence = 0;
const curve = [];
try {
  for (let index = 0; index < Number(flags.blocks); index += 1) {
    const before = process.cpuUsage();
    for (let call = 0; call < block; call += 1) {
      const id = `warm-${sequence++}`;
      await guard.run(action, {
        tenant: 'warm',
        principal: 'bench',
        input: { effect: id, requestId: id },
      });
    }
    const used = process.cpuUsage(before);
    curve.push(Math.round((used.user + used.system) / block));
  }
} finally {
  await store.close();
  if (kind === 'postgres') {
    const admin = new pg.Client({ connectionString: URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
console.log(
  JSON.stringify({ store: kind, block, execArgv: process.execArgv, cpuMicrosPerAction: curve }),
);

/**
 * Pages a SQLite action writes (issue 14, decision 127): runs the no-op action at c1 on a fresh
 * SQLite file per build, reads the WAL's frames back, and prints frames per commit by the table
 * or index each page belongs to (`dbstat`); then CPU per action with the builds alternating
 * round by round in this one process. Runs against dist/ (`npm run build` first). Not part of
 * `npm run bench`: a tool for A/B work. Syscall counts: run it under `strace -f -c`.
 *
 *   node bench/sqlite-pages.mjs                                   # this build
 *   node bench/sqlite-pages.mjs --against bench/.tmp/dist-base    # and a saved one, A/B
 *   node bench/sqlite-pages.mjs --rounds 6 --actions 1000 --synchronous normal
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { z } from 'zod';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    dist: { type: 'string', default: join(root, 'dist') },
    against: { type: 'string' },
    actions: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    commits: { type: 'string', default: '40' },
    synchronous: { type: 'string', default: 'full' },
  },
});

/** One build: its guard API, its SQLite store and the no-op action. */
async function build(dist) {
  const api = await import(pathToFileURL(join(resolve(dist), 'index.js')).href);
  const sqlite = await import(pathToFileURL(join(resolve(dist), 'stores/sqlite/index.js')).href);
  const receipt = (context) => ({
    id: `noop_${context.providerIdempotencyKey.slice(3, 27)}`,
    provider: 'noop',
  });
  const action = api.defineAction({
    type: { namespace: 'bench', name: 'noop', version: 1 },
    input: z.object({ effect: z.string(), requestId: z.string() }),
    protectedFields: ['effect'],
    policy: () => ({ decision: 'allow', reason: 'bench_allows' }),
    execute: async (_input, context) => ({ kind: 'accepted', receipt: receipt(context) }),
    verify: async (_input, context) => ({ kind: 'present', receipt: receipt(context) }),
  });
  return { name: dist, api, sqlite, action, cpu: [] };
}

let files = 0;
/** A fresh store and guard of `contender`; `done()` closes and deletes the file. */
function open(contender) {
  files += 1;
  const path = join(tmpdir(), `sideguard-sqlite-pages-${process.pid}-${files}.db`);
  const store = contender.sqlite.createSqliteStore({ path, synchronous: flags.synchronous });
  const guard = contender.api.createGuard({
    store,
    keyRing: contender.api.createDevelopmentKeyRing(),
  });
  let sequence = 0;
  const act = async () => {
    sequence += 1;
    const id = `e-${files}-${sequence}`;
    const outcome = await guard.run(contender.action, {
      tenant: 'bench-tenant',
      principal: 'bench',
      input: { effect: id, requestId: id },
    });
    if (outcome.outcome !== 'verified') throw new Error(`unexpected ${outcome.outcome}`);
  };
  const done = async () => {
    await store.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  };
  return { path, act, done };
}

/** The WAL's valid frames grouped by commit, each frame named by the b-tree of its page. */
function walCommits(path) {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const db = new Database(path, { readonly: true });
  const owners = new Map(
    db
      .prepare('SELECT name, pageno, pagetype FROM dbstat')
      .all()
      .map((row) => [
        row.pageno,
        row.pagetype === 'overflow' ? `${row.name} (overflow)` : row.name,
      ]),
  );
  db.close();
  const commits = [];
  let frames = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salts[0] || wal.readUInt32BE(at + 12) !== salts[1]) break;
    const page = wal.readUInt32BE(at);
    frames.push(page === 1 ? 'page 1 (header)' : (owners.get(page) ?? 'free list'));
    if (wal.readUInt32BE(at + 4) !== 0) {
      commits.push(frames);
      frames = [];
    }
  }
  return { pageSize, commits };
}

/** Frames per commit after the warm-up, once the WAL holds `--commits` commits. */
async function pages(contender) {
  const { path, act, done } = open(contender);
  for (let index = 0; index < Number(flags.warmup); index += 1) await act();
  const wanted = Number(flags.commits);
  for (let extra = 0; walCommits(path).commits.length < wanted && extra < 2000; extra += 1) {
    await act();
  }
  const { pageSize, commits } = walCommits(path);
  await done();
  // Commits alternate: the insert with its claim (synced), then the outcome (deferred).
  // The insert is the commit that writes the sealed snapshot's row.
  const first = commits.findIndex((frames) => frames.includes('proposal_envelopes'));
  const counted = commits.slice(first, first + 2 * Math.floor((commits.length - first) / 2));
  const byTree = [new Map(), new Map()];
  counted.forEach((frames, index) => {
    for (const tree of frames) byTree[index % 2].set(tree, (byTree[index % 2].get(tree) ?? 0) + 1);
  });
  const pairs = counted.length / 2;
  const line = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .map(([tree, count]) => `${tree} ${(count / pairs).toFixed(2)}`)
      .join(', ');
  const total = (map) => [...map.values()].reduce((sum, count) => sum + count, 0) / pairs;
  console.log(
    `\n${contender.name}: page size ${pageSize}, ${pairs} actions read back from the WAL`,
  );
  console.log(`  frames per action ${(total(byTree[0]) + total(byTree[1])).toFixed(1)}`);
  console.log(`  insert + claim commit ${total(byTree[0]).toFixed(1)}: ${line(byTree[0])}`);
  console.log(`  outcome commit ${total(byTree[1]).toFixed(1)}: ${line(byTree[1])}`);
}

/** One round of CPU per action on a fresh file. */
async function cpuRound(contender) {
  const { act, done } = open(contender);
  for (let index = 0; index < Number(flags.warmup); index += 1) await act();
  const actions = Number(flags.actions);
  const before = process.cpuUsage();
  const began = performance.now();
  for (let index = 0; index < actions; index += 1) await act();
  const used = process.cpuUsage(before);
  const elapsedMs = performance.now() - began;
  await done();
  contender.cpu.push({
    total: (used.user + used.system) / actions,
    user: used.user / actions,
    system: used.system / actions,
    rate: (actions / elapsedMs) * 1000,
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const contenders = [await build(flags.dist)];
if (flags.against !== undefined) contenders.push(await build(flags.against));
for (const contender of contenders) await pages(contender);
for (let round = 0; round < Number(flags.rounds); round += 1) {
  for (const contender of round % 2 === 0 ? contenders : [...contenders].reverse()) {
    await cpuRound(contender);
  }
}
console.log(
  `\nCPU per action, ${flags.rounds} rounds × ${flags.actions} actions at c1, SQLite ${flags.synchronous}, medians:`,
);
for (const contender of contenders) {
  const of = (key) => Math.round(median(contender.cpu.map((round) => round[key])));
  console.log(
    `  ${contender.name}: ${of('total')} µs (user ${of('user')}, system ${of('system')}), ${of('rate')} actions/s; rounds ${contender.cpu.map((round) => Math.round(round.total)).join(' ')}`,
  );
}

/**
 * The floor under the SQLite store, measured side by side on the same disk: raw append +
 * fdatasync, and one bare better-sqlite3 WAL transaction (one small insert) with
 * synchronous=FULL and NORMAL. An action is three store commits plus the guard's own CPU, so
 * these say how much of the store's rate is the disk and how much is work above it.
 */
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const tmp = join(dirname(fileURLToPath(import.meta.url)), '..', '.tmp', `floor-${process.pid}`);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Calls `fn` in a loop for `ms` milliseconds (bounded) and returns calls per second. */
function rate(fn, ms) {
  const end = performance.now() + ms;
  let count = 0;
  while (performance.now() < end && count < 1_000_000) {
    fn();
    count += 1;
  }
  return (count / ms) * 1000;
}

export async function run({ log, quick }) {
  const ms = quick ? 300 : 1500;
  const runs = quick ? 1 : 3;
  mkdirSync(tmp, { recursive: true });
  const samples = { fdatasync: [], sqliteFull: [], sqliteNormal: [] };
  try {
    for (let index = 0; index < runs; index++) {
      const fd = openSync(join(tmp, 'sync.bin'), 'w');
      const line = 'x'.repeat(64);
      samples.fdatasync.push(
        rate(() => {
          writeSync(fd, line);
          fdatasyncSync(fd);
        }, ms),
      );
      closeSync(fd);
      for (const [key, mode] of [
        ['sqliteFull', 'FULL'],
        ['sqliteNormal', 'NORMAL'],
      ]) {
        const path = join(tmp, `${key}.db`);
        for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
        const db = new Database(path);
        db.pragma('journal_mode = WAL');
        db.pragma(`synchronous = ${mode}`);
        db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
        const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
        const transaction = db.transaction(() => insert.run('y'.repeat(200)));
        samples[key].push(rate(() => transaction.immediate(), ms));
        db.close();
      }
      log(
        `run ${index + 1}: fdatasync ${Math.round(samples.fdatasync.at(-1))}/s, SQLite FULL ${Math.round(samples.sqliteFull.at(-1))}/s, NORMAL ${Math.round(samples.sqliteNormal.at(-1))}/s`,
      );
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const row = (measure, values) => ({
    measure,
    'per second (median)': Math.round(median(values)),
    runs: values.map((v) => Math.round(v)).join(' / '),
  });
  const results = Object.fromEntries(
    Object.entries(samples).map(([key, values]) => [
      key,
      { perSecondMedian: Math.round(median(values)), runs: values.map(Math.round) },
    ]),
  );
  return {
    name: 'sqlite-floor',
    results,
    table: [
      row('append 64 B + fdatasync', samples.fdatasync),
      row('bare SQLite WAL transaction, synchronous=FULL', samples.sqliteFull),
      row('bare SQLite WAL transaction, synchronous=NORMAL', samples.sqliteNormal),
    ],
  };
}

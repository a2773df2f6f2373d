/**
 * The SQLite tier: the same schedules over the real SQLite adapter instead of the memory store,
 * slower (a schedule costs ~40 ms instead of ~5 ms on a quiet machine) but through the adapter users run. Each
 * schedule gets its own file, copied from one migrated template; a file is closed and deleted
 * when the next schedule opens its own, and `close` removes the rest. Writes use synchronous NORMAL:
 * the simulator crashes processes, never the file system (docs/explore.md), so a sync would
 * prove nothing here. The driver is loaded only when the tier is created, so importing
 * `sideguard/explore` loads no native module.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GuardStore } from '../core/store.js';

/** Store tiers the explorer runs on. */
export const ExploreStoreTier = { memory: 'memory', sqlite: 'sqlite' } as const;
export type ExploreStoreTier = (typeof ExploreStoreTier)[keyof typeof ExploreStoreTier];

/** A store opener for `scheduleOptions.openStore`, and its cleanup. */
export interface SqliteTier {
  /** Opens a fresh SQLite store for one schedule (closing and deleting the previous one). */
  readonly openStore: () => GuardStore;
  /** The folder holding the files (removed by `close`). */
  readonly directory: string;
  /** Closes the last store and removes every file. */
  close(): Promise<void>;
}

/** Creates the SQLite tier in a new temporary folder (or under `parent`). */
export async function createSqliteTier(parent: string = tmpdir()): Promise<SqliteTier> {
  const { createSqliteStore } = await import('../stores/sqlite/sqlite-store.js');
  const directory = mkdtempSync(join(parent, 'sideguard-explore-sqlite-'));
  const template = join(directory, 'template.db');
  await createSqliteStore({ path: template, synchronous: 'normal' }).close();
  let opened = 0;
  let current: { readonly store: GuardStore; readonly path: string } | undefined;

  const release = async (): Promise<void> => {
    const previous = current;
    current = undefined;
    if (previous === undefined) return;
    // A crashed schedule may leave a commit parked forever; the file goes either way.
    await previous.store.close().catch(() => undefined);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${previous.path}${suffix}`, { force: true });
  };

  return {
    directory,
    openStore() {
      void release();
      const path = join(directory, `schedule-${opened}.db`);
      opened += 1;
      copyFileSync(template, path);
      const store = createSqliteStore({ path, synchronous: 'normal', checkOnOpen: 'none' });
      current = { store, path };
      return store;
    },
    async close() {
      await release();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The SQLite store against the store conformance suite, one fresh file per test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { createSqliteStore } from './sqlite-store.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-case-'));
let files = 0;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

runStoreConformance({
  describe,
  it,
  name: 'sqlite',
  newStore: async () => {
    files += 1;
    return createSqliteStore({ path: join(directory, `store-${files}.db`) });
  },
});

/**
 * The τ-bench retail dataset (MIT, © 2024 Sierra; LICENSE beside the data) as the retail
 * provider's seed. One copy lives in `fixtures/tau-bench-retail/`, which ships in the package;
 * this module finds it from both `src/` and `dist/` and parses each file once per process.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonRecord } from '../../sandbox-types.js';

/** Where the dataset lives: `<package>/fixtures/tau-bench-retail/` (same depth from src and dist). */
export const retailDataDirectory = fileURLToPath(
  new URL('../../../../fixtures/tau-bench-retail/', import.meta.url),
);

/** The three collections of the dataset, keyed by id in file order. */
export interface RetailDataset {
  readonly users: Readonly<Record<string, JsonRecord>>;
  readonly orders: Readonly<Record<string, JsonRecord>>;
  readonly products: Readonly<Record<string, JsonRecord>>;
}

const cache = new Map<string, unknown>();

/** Parses `fixtures/tau-bench-retail/<file>` once; later calls share the (frozen-by-convention) value. */
export function readRetailFile(file: string): unknown {
  const cached = cache.get(file);
  if (cached !== undefined) return cached;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(`${retailDataDirectory}${file}`, 'utf8'));
  } catch (error) {
    throw new Error(
      `Failed to read the τ-bench retail data file ${file} in ${retailDataDirectory}: ${error instanceof Error ? error.message : String(error)}; reinstall the package or restore fixtures/tau-bench-retail/`,
    );
  }
  cache.set(file, parsed);
  return parsed;
}

/** The users, orders and products of the dataset (shared: copy before changing). */
export function loadRetailDataset(): RetailDataset {
  return {
    users: readRetailFile('users.json') as RetailDataset['users'],
    orders: readRetailFile('orders.json') as RetailDataset['orders'],
    products: readRetailFile('products.json') as RetailDataset['products'],
  };
}

/**
 * `sideguard/sqlite`: the embedded default store, one SQLite file per application.
 */

export { StoreUnavailableCode, StoreUnavailableError } from '../store-errors.js';
export type { ErasurePurge } from '../store-snapshot.js';
export { SQLITE_SCHEMA_VERSION } from './sqlite-migrations.js';
export { createSqliteStore, type SqliteStore, type SqliteStoreConfig } from './sqlite-store.js';

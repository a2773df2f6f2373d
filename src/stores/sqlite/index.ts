/**
 * `sideguard/sqlite`: the embedded default store, one SQLite file per application.
 */

export type { ErasurePurge } from '../store-envelopes.js';
export { StoreUnavailableCode, StoreUnavailableError } from '../store-errors.js';
export { SQLITE_SCHEMA_VERSION } from './sqlite-migrations.js';
export { createSqliteStore, type SqliteStore, type SqliteStoreConfig } from './sqlite-store.js';

/**
 * `sideguard/postgres`: the store for many processes or machines sharing one PostgreSQL database.
 */

export type { ErasurePurge } from '../store-envelopes.js';
export { StoreUnavailableCode, StoreUnavailableError } from '../store-errors.js';
export { type DropSchemaOptions, dropPostgresSchema } from './postgres-maintenance.js';
export { POSTGRES_SCHEMA_VERSION } from './postgres-migrations.js';
export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreConfig,
} from './postgres-store.js';

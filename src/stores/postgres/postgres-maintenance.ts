/**
 * PostgreSQL store maintenance that runs outside group commit: ledger retention (truncation to
 * a checkpoint), in its own transaction with the tenant's chain head locked.
 */
import type { PostgresContext } from './postgres-context.js';

/**
 * Removes the tenant's events through `throughSequence` and records the last one removed as
 * the checkpoint, holding the chain head so no commit seals onto the chain meanwhile.
 */
export async function truncatePostgresLedger(
  context: PostgresContext,
  tenant: string,
  throughSequence: number,
): Promise<void> {
  const { sql } = context;
  const client = await context.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // Lock the head so no commit seals onto the tenant's chain while it is cut.
    await client.query(sql.lockHead, [tenant]);
    const last = (
      await client.query<{ sequence: string; hash: string }>(sql.lastEventThrough, [
        tenant,
        throughSequence,
      ])
    ).rows[0];
    if (last !== undefined) {
      await client.query(sql.deleteEventsThrough, [tenant, throughSequence]);
      await client.query(sql.setCheckpoint, [tenant, last.sequence, last.hash]);
    }
    await client.query('COMMIT');
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(broken);
  }
}

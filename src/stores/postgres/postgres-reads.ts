/**
 * The PostgreSQL store's reads: each one a single parameterised statement on the pool (no
 * transaction of its own), prepared once per connection where the store may, every decoded row
 * checked against the row it came from.
 */
import type pg from 'pg';
import type { LedgerEvent, LedgerHead } from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  DueQuery,
  EffectClaim,
  LedgerQuery,
  ProposalListQuery,
  ProposalRecord,
} from '../../core/store.js';
import {
  decodeEvent,
  decodeEvidence,
  type EventRow,
  type EvidenceRow,
  type ProposalRow,
} from '../store-codec.js';
import { checkProposalListQuery } from '../store-queries.js';
import { type PostgresContext, toProposal } from './postgres-context.js';
import { preparedName } from './postgres-sql.js';

/** Statement texts whose generic plan is as good as a custom one, so they are prepared. */
const PREPARED_READS = [
  'getProposal',
  'listByEffect',
  'getClaim',
  'listEvidence',
  'readLedger',
  'readProposalLedger',
  'ledgerHead',
  'checkpoint',
] as const;

/** The read members of the PostgreSQL store, each one statement on the pool. */
export function postgresReads(context: PostgresContext) {
  const { sql, where } = context;
  const names = new Map<string, string>(
    context.preparedStatements
      ? PREPARED_READS.map((key) => [sql[key], preparedName(sql[key])])
      : [],
  );
  const pool = context.pool;
  /** Runs `text` on a pooled connection, as a named (prepared) statement where listed. */
  const db = {
    query<R extends pg.QueryResultRow>(text: string, values: unknown[]) {
      const name = names.get(text);
      return name === undefined
        ? pool.query<R>(text, values)
        : pool.query<R>({ name, text, values });
    },
  };
  const proposals = (result: pg.QueryResult<ProposalRow>): ProposalRecord[] =>
    result.rows.map((row) => toProposal(context, row));
  return {
    async getProposal(tenant: string, proposal: string): Promise<ProposalRecord | undefined> {
      const row = (await db.query<ProposalRow>(sql.getProposal, [tenant, proposal])).rows[0];
      return row === undefined ? undefined : toProposal(context, row);
    },

    async listProposalsByEffect(
      tenant: string,
      effectScope: string,
      limit: number,
    ): Promise<readonly ProposalRecord[]> {
      return proposals(await db.query<ProposalRow>(sql.listByEffect, [tenant, effectScope, limit]));
    },

    async getEffectClaim(tenant: string, effectScope: string): Promise<EffectClaim | undefined> {
      const result = await db.query<{ proposal: string; claimed_at_ms: string }>(sql.getClaim, [
        tenant,
        effectScope,
      ]);
      const row = result.rows[0];
      return row === undefined
        ? undefined
        : { tenant, effectScope, proposal: row.proposal, claimedAtMs: Number(row.claimed_at_ms) };
    },

    async listEvidence(
      tenant: string,
      proposal: string,
    ): Promise<readonly AuthorityEvidenceRecord[]> {
      const result = await db.query<EvidenceRow>(sql.listEvidence, [tenant, proposal]);
      return result.rows.map((row) => decodeEvidence(row.record, row, where));
    },

    async listDue(query: DueQuery): Promise<readonly ProposalRecord[]> {
      return proposals(
        await db.query<ProposalRow>(sql.listDue, [
          query.tenant,
          query.dueAtOrBeforeMs,
          query.statuses,
          query.limit ?? 100,
        ]),
      );
    },

    async listProposals(query: ProposalListQuery): Promise<readonly ProposalRecord[]> {
      const checked = checkProposalListQuery(query);
      const { after } = checked;
      return proposals(
        await db.query<ProposalRow>(sql.listProposals, [
          checked.statuses,
          checked.tenant ?? null,
          checked.actionType ?? null,
          after?.expiresAtMs ?? null,
          after?.tenant ?? null,
          after?.proposal ?? null,
          checked.limit,
        ]),
      );
    },

    async readLedger(query: LedgerQuery): Promise<readonly LedgerEvent[]> {
      const after = query.afterSequence ?? 0;
      const limit = query.limit ?? null;
      const result =
        query.proposal === undefined
          ? await db.query<EventRow>(sql.readLedger, [query.tenant, after, limit])
          : await db.query<EventRow>(sql.readProposalLedger, [
              query.tenant,
              after,
              query.proposal,
              limit,
            ]);
      return result.rows.map((row) => decodeEvent(row.event, row, where));
    },

    /** The head, made durable first: the statement's commit flushes the WAL (decision 124). */
    async ledgerHead(tenant: string): Promise<LedgerHead | undefined> {
      const result = await db.query<{ sequence: string | null; hash: string | null }>(
        sql.ledgerHead,
        [tenant],
      );
      const row = result.rows[0];
      return row?.sequence == null || row.hash == null
        ? undefined
        : { sequence: Number(row.sequence), hash: row.hash };
    },

    async ledgerCheckpoint(tenant: string): Promise<LedgerHead | undefined> {
      const result = await db.query<{
        checkpoint_sequence: string | null;
        checkpoint_hash: string | null;
      }>(sql.checkpoint, [tenant]);
      const row = result.rows[0];
      if (row === undefined || row.checkpoint_sequence === null || row.checkpoint_hash === null) {
        return undefined;
      }
      return { sequence: Number(row.checkpoint_sequence), hash: row.checkpoint_hash };
    },
  };
}

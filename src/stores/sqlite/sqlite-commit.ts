/**
 * One commit inside the SQLite batch transaction: decided with the shared store rules against
 * what the file holds, then applied (proposal, claim, evidence, sealed events, head).
 */
import { StoreInvariantError } from '../../core/errors.js';
import { type LedgerEvent, sealLedgerEvents } from '../../core/ledger.js';
import type {
  EffectClaim,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { checkEffectClaim, checkProposalWrite } from '../../core/store-rules.js';
import {
  decodeProposal,
  encodeJson,
  firstDuplicateEvidence,
  type ProposalRow,
} from '../store-codec.js';
import {
  type EnvelopeChange,
  EnvelopePart,
  envelopeTexts,
  planEnvelopeUpdate,
  recordWithoutEnvelopes,
} from '../store-envelopes.js';
import type { SqliteStatements } from './sqlite-statements.js';

/** What a commit needs: the prepared statements and the file's name for messages. */
export interface SqliteCommitContext {
  readonly statements: SqliteStatements;
  /** `SQLite database <path>`. */
  readonly where: string;
}

/** Decodes a proposal row, asserting it is the row that was asked for. */
export function toProposal(context: SqliteCommitContext, row: ProposalRow): ProposalRecord {
  return decodeProposal(row, context.where);
}

/** What the stored state says of a commit: its refusal, or what an update does to each part. */
type Decision =
  | { readonly refused: StoreCommitResult }
  | {
      readonly refused?: undefined;
      readonly envelopes?: Record<EnvelopePart, EnvelopeChange>;
      /** The update keeps the effect scope, creation time and action type. */
      readonly keepsIdentity?: boolean;
    };

/** Decides a commit against the stored state (nothing is written here). */
function decide(context: SqliteCommitContext, write: StoreCommit): Decision {
  const { statements } = context;
  const tenant = write.tenant;
  const change = write.proposal;
  const currentRow =
    change === undefined
      ? undefined
      : statements.getProposalToUpdate.get(tenant, change.record.proposal);
  // The common case — the row is where the caller expects it — needs only the revision and
  // status columns; the full record is decoded (and validated) only to report a conflict.
  const expected =
    change?.kind === 'update' &&
    currentRow !== undefined &&
    currentRow.revision === change.expectedRevision &&
    currentRow.status === change.expectedStatus;
  const refused = expected
    ? undefined
    : checkProposalWrite(
        write,
        currentRow === undefined ? undefined : toProposal(context, currentRow),
      );
  if (refused !== undefined) return { refused };
  if (
    write.onlyIfEffectUnlisted === true &&
    change !== undefined &&
    statements.effectListed.get(tenant, change.record.effectScope) !== undefined
  ) {
    return { refused: { kind: 'effect_listed' } };
  }
  const envelopes =
    change?.kind === 'update'
      ? planEnvelopeUpdate(
          write,
          { snapshot: currentRow?.snapshot ?? null, output: currentRow?.output ?? null },
          envelopeTexts(change.record),
        )
      : undefined;
  if (write.claim !== undefined) {
    const row = statements.getClaim.get(tenant, write.claim.effectScope);
    const existing: EffectClaim | undefined =
      row === undefined
        ? undefined
        : {
            tenant,
            effectScope: write.claim.effectScope,
            proposal: row.proposal,
            claimedAtMs: row.claimed_at_ms,
          };
    const owner =
      existing === undefined ? undefined : statements.getStatus.get(tenant, existing.proposal);
    const claimRefused = checkEffectClaim(write.claim.proposal, existing, owner?.status);
    if (claimRefused !== undefined) return { refused: claimRefused };
  }
  const duplicate = firstDuplicateEvidence(
    write.evidence ?? [],
    (item) =>
      statements.evidenceExists.get(tenant, item.proposal, item.evidenceDigest) !== undefined,
  );
  if (duplicate !== undefined) {
    return { refused: { kind: 'evidence_duplicate', evidenceDigest: duplicate } };
  }
  if (envelopes === undefined) return {};
  const record = change?.record;
  const keepsIdentity =
    record !== undefined &&
    currentRow !== undefined &&
    currentRow.effect_scope === record.effectScope &&
    currentRow.created_at_ms === record.createdAtMs &&
    currentRow.action_type === record.actionType;
  return { envelopes, keepsIdentity };
}

/**
 * Writes the proposal of an accepted commit (insert, or the compare-and-set update) and the
 * rows of its sealed parts: written with the insert (or when an update adds the output),
 * deleted when an update sets a part to null. Returns whether a part was deleted (the WAL then
 * gets truncated after COMMIT).
 */
function writeProposal(
  context: SqliteCommitContext,
  write: StoreCommit,
  decision: Exclude<Decision, { readonly refused: StoreCommitResult }>,
): boolean {
  const { envelopes } = decision;
  const change = write.proposal;
  if (change === undefined) return false;
  const record = change.record;
  const { statements } = context;
  const columns = {
    tenant: write.tenant,
    proposal: record.proposal,
    revision: record.revision,
    status: record.status,
    effectScope: record.effectScope,
    createdAtMs: record.createdAtMs,
    dueAtMs: record.dueAtMs,
    expiresAtMs: record.expiresAtMs,
    actionType: record.actionType,
    record: encodeJson(recordWithoutEnvelopes(record)),
  };
  if (change.kind === 'insert') {
    statements.insertProposal.run(columns);
  } else {
    const expected = {
      expectedRevision: change.expectedRevision,
      expectedStatus: change.expectedStatus,
    };
    const updated = decision.keepsIdentity
      ? statements.updateProposalState.run({
          tenant: columns.tenant,
          proposal: columns.proposal,
          revision: columns.revision,
          status: columns.status,
          dueAtMs: columns.dueAtMs,
          expiresAtMs: columns.expiresAtMs,
          record: columns.record,
          ...expected,
        })
      : statements.updateProposal.run({ ...columns, ...expected });
    if (updated.changes !== 1) {
      throw new StoreInvariantError(
        'assertion_failed',
        `Assertion failed: compare-and-set on ${record.proposal} changed ${updated.changes} rows in ${context.where}`,
      );
    }
  }
  const texts = envelopeTexts(record);
  let deleted = false;
  for (const part of Object.values(EnvelopePart)) {
    const text = texts[part];
    const plan = envelopes?.[part] ?? (text === null ? 'keep' : 'write');
    if (plan === 'write') statements.insertEnvelope.run(write.tenant, record.proposal, part, text);
    if (plan === 'delete') {
      deleted =
        statements.deleteEnvelope.run(write.tenant, record.proposal, part).changes > 0 || deleted;
    }
  }
  return deleted;
}

/** Seals the commit's events onto the tenant's chain and moves the head. */
function appendEvents(context: SqliteCommitContext, write: StoreCommit): LedgerEvent[] {
  if (write.events.length === 0) return [];
  const { statements } = context;
  const tenant = write.tenant;
  const head = statements.getHead.get(tenant);
  const events = sealLedgerEvents(
    tenant,
    head === undefined ? undefined : { sequence: head.sequence, hash: head.hash },
    write.events,
  );
  for (const event of events) {
    statements.insertEvent.run(
      tenant,
      event.sequence,
      event.proposal,
      event.hash,
      encodeJson(event),
    );
  }
  const last = events.at(-1);
  if (last !== undefined) statements.upsertHead.run(tenant, last.sequence, last.hash);
  return events;
}

/** What one commit came to, and whether it deleted a sealed part (an erasure). */
export interface AppliedCommit {
  readonly result: StoreCommitResult;
  readonly deletedEnvelope: boolean;
}

/** Decides and applies one commit; runs inside the batch transaction and its savepoint. */
export function applyCommit(context: SqliteCommitContext, write: StoreCommit): AppliedCommit {
  const decision = decide(context, write);
  if (decision.refused !== undefined) return { result: decision.refused, deletedEnvelope: false };
  const { statements } = context;
  const deletedEnvelope = writeProposal(context, write, decision);
  if (write.claim !== undefined) {
    statements.upsertClaim.run(
      write.tenant,
      write.claim.effectScope,
      write.claim.proposal,
      write.claim.atMs,
    );
  }
  for (const item of write.evidence ?? []) {
    statements.insertEvidence.run(
      write.tenant,
      item.proposal,
      item.evidenceDigest,
      encodeJson(item),
    );
  }
  return { result: { kind: 'committed', events: appendEvents(context, write) }, deletedEnvelope };
}

/**
 * How the durable adapters turn records and events into stored text and back, with the checks
 * that a decoded row is the row that was asked for (an assertion after every read).
 */
import { StoreInvariantError } from '../core/errors.js';
import type { LedgerEvent } from '../core/ledger.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from '../core/store.js';
import { decodeEnvelope } from './store-envelopes.js';

/**
 * A proposal row as the durable stores read it: the record is its JSON text (without its sealed
 * parts), joined with the parts kept apart (decision 025; null where there is none).
 */
export interface ProposalRow {
  tenant: string;
  proposal: string;
  revision: number;
  status: string;
  record: string;
  snapshot: string | null;
  output: string | null;
}
/** A ledger event row as the durable stores read it. */
export interface EventRow {
  tenant: string;
  sequence: number;
  hash: string;
  event: string;
}
/** An authority evidence row as the durable stores read it. */
export interface EvidenceRow {
  tenant: string;
  proposal: string;
  evidence_digest: string;
  record: string;
}

/** Serialises a record, event or evidence for a text column (exact JSON round-trip). */
export function encodeJson(value: ProposalRecord | LedgerEvent | AuthorityEvidenceRecord): string {
  return JSON.stringify(value);
}

function corrupted(what: string, where: string, cause?: unknown): StoreInvariantError {
  return new StoreInvariantError(
    'store_record_corrupted',
    `Stored ${what} in ${where} does not match its row; the database was changed outside Sideguard or is damaged. Restore it from a backup.`,
    cause === undefined ? {} : { cause },
  );
}

function parse(text: string, what: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupted(what, where, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corrupted(what, where);
  }
  return value as Record<string, unknown>;
}

/**
 * Decodes a stored proposal with its sealed parts and asserts it belongs to the row it was read
 * from (the stored record itself never holds them: they are kept apart, decision 025).
 */
export function decodeProposal(row: ProposalRow, where: string): ProposalRecord {
  const value = parse(row.record, 'proposal', where);
  if (
    value.tenant !== row.tenant ||
    value.proposal !== row.proposal ||
    value.revision !== Number(row.revision) ||
    value.status !== row.status ||
    value.snapshot !== null ||
    (value.output !== undefined && value.output !== null)
  ) {
    throw corrupted(`proposal ${JSON.stringify(row.proposal)}`, where);
  }
  const record: Record<string, unknown> = {
    ...value,
    snapshot: decodeEnvelope(row.snapshot, where),
  };
  if ('output' in value || row.output !== null) record.output = decodeEnvelope(row.output, where);
  return record as unknown as ProposalRecord;
}

/** Decodes a stored ledger event and asserts its tenant, sequence and hash match the row. */
export function decodeEvent(
  text: string,
  row: { tenant: string; sequence: number; hash: string },
  where: string,
): LedgerEvent {
  const value = parse(text, 'ledger event', where);
  if (
    value.tenant !== row.tenant ||
    value.sequence !== Number(row.sequence) ||
    value.hash !== row.hash
  ) {
    throw corrupted(`ledger event ${row.sequence}`, where);
  }
  return value as unknown as LedgerEvent;
}

/** Decodes stored authority evidence and asserts its digest matches the row. */
export function decodeEvidence(
  text: string,
  row: { tenant: string; proposal: string; evidence_digest: string },
  where: string,
): AuthorityEvidenceRecord {
  const value = parse(text, 'authority evidence', where);
  if (
    value.tenant !== row.tenant ||
    value.proposal !== row.proposal ||
    value.evidenceDigest !== row.evidence_digest
  ) {
    throw corrupted(`evidence ${row.evidence_digest}`, where);
  }
  return value as unknown as AuthorityEvidenceRecord;
}

/**
 * The digest of the first evidence item (in commit order) that is already stored for its
 * proposal or appears twice in the commit, or undefined. Shared so every adapter reports the
 * same digest.
 */
export function firstDuplicateEvidence(
  evidence: readonly AuthorityEvidenceRecord[],
  isStored: (item: AuthorityEvidenceRecord) => boolean,
): string | undefined {
  for (const item of evidence) {
    const twice =
      evidence.filter(
        (other) => other.proposal === item.proposal && other.evidenceDigest === item.evidenceDigest,
      ).length > 1;
    if (twice || isStored(item)) return item.evidenceDigest;
  }
  return undefined;
}

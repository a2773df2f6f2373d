/**
 * The sealed parts of a proposal kept apart from its record (decision 025): the snapshot
 * (input and preview, written with the insert) and the private output (written once the write
 * is known). Each lives in its own row, never copied by a revision of the record, and erasure
 * deletes the row: the one place its wrapped data key was.
 */

import type { SealedEnvelope } from '../core/envelope.js';
import { StoreInvariantError } from '../core/errors.js';
import type { ProposalRecord, StoreCommit } from '../core/store.js';

/** The sealed parts of a record, each kept in its own row. */
export const EnvelopePart = { snapshot: 'snapshot', output: 'output' } as const;
/** The sealed parts of a record, each kept in its own row. */
export type EnvelopePart = (typeof EnvelopePart)[keyof typeof EnvelopePart];

/** A record's sealed parts as stored text, null where it has none. */
export interface EnvelopeTexts {
  readonly snapshot: string | null;
  readonly output: string | null;
}

/** What an update does to one part's row. */
export type EnvelopeChange = 'keep' | 'write' | 'delete';

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/**
 * An envelope as stored text: JSON with sorted keys, so two equal envelopes are equal text
 * whatever order their keys were built in (the update check compares text).
 */
export function encodeEnvelope(envelope: SealedEnvelope): string {
  return JSON.stringify(envelope, sortKeys);
}

/** The stored text of each sealed part of `record`. */
export function envelopeTexts(record: ProposalRecord): EnvelopeTexts {
  const text = (envelope: SealedEnvelope | null | undefined) =>
    envelope === null || envelope === undefined ? null : encodeEnvelope(envelope);
  return { snapshot: text(record.snapshot), output: text(record.output) };
}

/** A part's column as read: the envelope, or null when there is none (or it was erased). */
export function decodeEnvelope(text: string | null, where: string): SealedEnvelope | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw envelopeCorrupted(where, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw envelopeCorrupted(where);
  }
  return value as SealedEnvelope;
}

function envelopeCorrupted(where: string, cause?: unknown): StoreInvariantError {
  return new StoreInvariantError(
    'store_record_corrupted',
    `A stored envelope in ${where} is not a JSON object; the database was changed outside Sideguard or is damaged. Restore it from a backup.`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * The record as the proposals table stores it: its sealed parts replaced by null (they are
 * kept apart). An `output` key the record did not have stays absent, so records read back
 * exactly as written.
 */
export function recordWithoutEnvelopes(record: ProposalRecord): ProposalRecord {
  return 'output' in record
    ? { ...record, snapshot: null, output: null }
    : { ...record, snapshot: null };
}

/** The error for an update that would change a sealed part. */
export function envelopeChanged(write: StoreCommit): StoreInvariantError {
  return new StoreInvariantError(
    'store_commit_malformed',
    `Refused store commit: an update of proposal ${JSON.stringify(write.proposal?.record.proposal)} may keep its snapshot or set it to null (erasure), and may add its output where there is none, keep it or set it to null; it never changes either`,
  );
}

/**
 * What an update does to each sealed part, under the store invariant: the snapshot is kept or
 * set to null, never changed nor added; the output may be added where there is none, kept, or
 * set to null, never changed.
 * @throws StoreInvariantError `store_commit_malformed` when the update would change a part.
 */
export function planEnvelopeUpdate(
  write: StoreCommit,
  stored: EnvelopeTexts,
  next: EnvelopeTexts,
): Record<EnvelopePart, EnvelopeChange> {
  const plan = (part: EnvelopePart): EnvelopeChange => {
    const before = stored[part];
    const after = next[part];
    if (after === null) return before === null ? 'keep' : 'delete';
    if (before === after) return 'keep';
    if (before === null && part === EnvelopePart.output) return 'write';
    throw envelopeChanged(write);
  };
  return { snapshot: plan(EnvelopePart.snapshot), output: plan(EnvelopePart.output) };
}

/**
 * {@link planEnvelopeUpdate} for two records in memory: a part that is the same object in both
 * (the guard carries the stored envelope over into the next revision) is kept without encoding
 * it; any other pair is compared as stored text.
 */
export function planEnvelopeUpdateOfRecords(
  write: StoreCommit,
  stored: ProposalRecord,
  next: ProposalRecord,
): Record<EnvelopePart, EnvelopeChange> {
  if (stored.snapshot === next.snapshot && (stored.output ?? null) === (next.output ?? null)) {
    return { snapshot: 'keep', output: 'keep' };
  }
  return planEnvelopeUpdate(write, envelopeTexts(stored), envelopeTexts(next));
}

/** What a purge of erased envelopes (`purgeErased()` of a durable store) did. */
export interface ErasurePurge {
  /** True when nothing the store's files keep can still hold an erased envelope. */
  readonly complete: boolean;
  /** What was done (or what is left), for logs. */
  readonly detail: string;
}

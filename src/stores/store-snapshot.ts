/**
 * The sealed snapshot kept apart from the proposal record (decision 025): written once when the
 * proposal is inserted, never rewritten by an update, deleted by erasure. So revisions of a
 * record never copy the wrapped data key, and erasing removes the one row that held it.
 */

import type { SealedEnvelope } from '../core/envelope.js';
import { StoreInvariantError } from '../core/errors.js';
import type { ProposalRecord, StoreCommit } from '../core/store.js';

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/**
 * A snapshot as stored text: JSON with sorted keys, so two equal envelopes are equal text
 * whatever order their keys were built in (the update check compares text).
 */
export function encodeSnapshot(envelope: SealedEnvelope): string {
  return JSON.stringify(envelope, sortKeys);
}

/** The snapshot column of a row: the envelope, or null when there is none (or it was erased). */
export function decodeSnapshot(text: string | null, where: string): SealedEnvelope | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw snapshotCorrupted(where, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw snapshotCorrupted(where);
  }
  return value as SealedEnvelope;
}

function snapshotCorrupted(where: string, cause?: unknown): StoreInvariantError {
  return new StoreInvariantError(
    'store_record_corrupted',
    `A stored snapshot in ${where} is not a JSON object; the database was changed outside Sideguard or is damaged. Restore it from a backup.`,
    cause === undefined ? {} : { cause },
  );
}

/** The record as the proposals table stores it: everything but the snapshot (kept apart). */
export function recordWithoutSnapshot(record: ProposalRecord): ProposalRecord {
  return { ...record, snapshot: null };
}

/**
 * The store invariant on snapshots: an update keeps the stored snapshot exactly or sets it to
 * null (erasure); it never changes one, nor adds one where there was none.
 * @throws StoreInvariantError `store_commit_malformed` when `next` would change `stored`.
 */
export function assertSnapshotKept(
  write: StoreCommit,
  stored: string | null,
  next: SealedEnvelope | null,
): void {
  if (next === null || (stored !== null && stored === encodeSnapshot(next))) return;
  throw snapshotChanged(write);
}

/** The error for an update that would change a proposal's snapshot. */
export function snapshotChanged(write: StoreCommit): StoreInvariantError {
  return new StoreInvariantError(
    'store_commit_malformed',
    `Refused store commit: an update of proposal ${JSON.stringify(write.proposal?.record.proposal)} may keep its snapshot or set it to null (erasure), never change it or add one`,
  );
}

/** What a purge of erased snapshots (`purgeErasedSnapshots()` of a durable store) did. */
export interface ErasurePurge {
  /** True when nothing the store's files keep can still hold an erased snapshot. */
  readonly complete: boolean;
  /** What was done (or what is left), for logs. */
  readonly detail: string;
}

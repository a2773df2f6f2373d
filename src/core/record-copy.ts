/**
 * Copying a proposal record with some fields changed, without object spread: V8 copies a
 * record of ~27 fields by `{ ...record, field }` on a slow path (≈ 0.4 µs per copy against
 * ≈ 0.03 µs for a literal that names every field), and the guard makes several copies per
 * action (decision 133).
 */
import type { ProposalRecord } from './store.js';

/** What a copy changes; a field left out keeps the previous value. */
export type RecordChanges = { -readonly [Key in keyof ProposalRecord]?: ProposalRecord[Key] };

/** Every field a record may have, in the order the guard builds them. */
const RECORD_FIELDS: ReadonlySet<string> = new Set([
  'tenant',
  'proposal',
  'actionType',
  'semanticEffectKey',
  'principal',
  'agent',
  'expiresAtMs',
  'revision',
  'status',
  'effectScope',
  'createdAtMs',
  'updatedAtMs',
  'dueAtMs',
  'commitment',
  'snapshot',
  'policy',
  'reasonCode',
  'lease',
  'resendGeneration',
  'verificationAttempts',
  'receipts',
  'compensationReceipts',
  'supersededBy',
  'supersedes',
  'countedEvidence',
  'output',
  'recordMac',
]);

/** Whether every enumerable key of `value` (own or inherited) is a record field with a value. */
function onlyRecordFields(value: object): boolean {
  for (const key in value) {
    if (!RECORD_FIELDS.has(key) || (value as Record<string, unknown>)[key] === undefined) {
      return false;
    }
  }
  return true;
}

/**
 * `{ ...previous, ...changes, ...more }`, field for field: the same fields with the same values,
 * the record's own fields in the guard's order and a field new to `previous` last (a spread
 * keeps `previous`'s order; nothing reads records by key order). A record or change holding
 * anything else (a field this version does not know, a field set to undefined, an inherited
 * enumerable key) is copied by spread, exactly as before.
 */
export function copyRecord(
  previous: ProposalRecord,
  changes: RecordChanges,
  more?: RecordChanges,
): ProposalRecord {
  if (
    !onlyRecordFields(previous) ||
    !onlyRecordFields(changes) ||
    (more !== undefined && !onlyRecordFields(more))
  ) {
    return { ...previous, ...changes, ...more };
  }
  const next: RecordChanges & Omit<ProposalRecord, 'output' | 'countedEvidence' | 'recordMac'> = {
    tenant: previous.tenant,
    proposal: previous.proposal,
    actionType: previous.actionType,
    semanticEffectKey: previous.semanticEffectKey,
    principal: previous.principal,
    agent: previous.agent,
    expiresAtMs: previous.expiresAtMs,
    revision: previous.revision,
    status: previous.status,
    effectScope: previous.effectScope,
    createdAtMs: previous.createdAtMs,
    updatedAtMs: previous.updatedAtMs,
    dueAtMs: previous.dueAtMs,
    commitment: previous.commitment,
    snapshot: previous.snapshot,
    policy: previous.policy,
    reasonCode: previous.reasonCode,
    lease: previous.lease,
    resendGeneration: previous.resendGeneration,
    verificationAttempts: previous.verificationAttempts,
    receipts: previous.receipts,
    compensationReceipts: previous.compensationReceipts,
    supersededBy: previous.supersededBy,
    supersedes: previous.supersedes,
  };
  if (previous.countedEvidence !== undefined) next.countedEvidence = previous.countedEvidence;
  if (previous.output !== undefined) next.output = previous.output;
  if (previous.recordMac !== undefined) next.recordMac = previous.recordMac;
  const target = next as Record<string, unknown>;
  for (const key in changes) target[key] = (changes as Record<string, unknown>)[key];
  if (more !== undefined) {
    for (const key in more) target[key] = (more as Record<string, unknown>)[key];
  }
  return next;
}

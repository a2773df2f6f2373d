/**
 * Sample records, commits and small helpers the store conformance cases share. Every test uses
 * its own fresh tenant, so stores that share data between tests (one database schema) never
 * let tests see each other.
 */
import { strict as assert } from 'node:assert';
import type { LedgerEvent, LedgerEventDraft } from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  GuardStore,
  ProposalRecord,
  StoreCommit,
} from '../../core/store.js';
import type { LedgerEventType, ProposalStatus } from '../../core/vocabulary.js';
import { assertCommitted } from './conformance-assert.js';

/** Registers one conformance test that gets a fresh store (closed afterwards unless it closes it). */
export type ConformanceTest = (
  name: string,
  body: (store: GuardStore) => Promise<void>,
  config?: { readonly closesStore?: boolean; readonly timeoutMs?: number },
) => void;

/** The epoch milliseconds every sample record is dated from. */
export const BASE_MS = 1_700_000_000_000;
let tenantCounter = 0;

/** A tenant id no other test (or run) uses. */
export function freshTenant(label: string): string {
  tenantCounter += 1;
  return `t-${label}-${process.pid}-${Date.now().toString(36)}-${tenantCounter}`;
}

/** A stored-looking proposal with a sealed snapshot; override what a test needs. */
export function record(
  tenant: string,
  proposal: string,
  overrides: Partial<ProposalRecord> = {},
): ProposalRecord {
  const actionType = overrides.actionType ?? 'support.refund@1';
  const semanticEffectKey = overrides.semanticEffectKey ?? `sek-${proposal}`;
  return {
    tenant,
    proposal,
    revision: 1,
    status: 'authorized',
    actionType,
    semanticEffectKey,
    effectScope: `${actionType}#${semanticEffectKey}`,
    principal: 'user:alice',
    agent: null,
    createdAtMs: BASE_MS,
    updatedAtMs: BASE_MS,
    expiresAtMs: BASE_MS + 3_600_000,
    dueAtMs: null,
    commitment: { algorithm: 'hmac-sha256', keyHandle: 'test', keyVersion: 1, value: 'Y29tbWl0' },
    snapshot: {
      v: 1,
      alg: 'A256GCM',
      kek: { handle: 'test', version: 1 },
      wrappedKey: 'd3JhcHBlZA',
      iv: 'aXY',
      ciphertext: 'Y2lwaGVy',
      tag: 'dGFn',
    },
    policy: { decision: 'allow', reasonCode: 'policy.allowed' },
    reasonCode: null,
    lease: null,
    resendGeneration: 0,
    verificationAttempts: 0,
    receipts: [],
    compensationReceipts: [],
    supersededBy: null,
    supersedes: null,
    ...overrides,
  };
}

/** A ledger event draft. */
export function draft(
  proposal: string | null,
  type: LedgerEventType,
  status: ProposalStatus | null,
  revision: number | null,
  data: LedgerEventDraft['data'] = {},
): LedgerEventDraft {
  return {
    proposal,
    type,
    at: new Date(BASE_MS).toISOString(),
    actionType: proposal === null ? null : 'support.refund@1',
    status,
    revision,
    data,
  };
}

/** Inserts `value` with one `policy_decided` event. */
export function insertCommit(
  value: ProposalRecord,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence'>> = {},
): StoreCommit {
  return {
    tenant: value.tenant,
    proposal: { kind: 'insert', record: value },
    events: [draft(value.proposal, 'policy_decided', value.status, 1, { reasonCode: 'x' })],
    ...extra,
  };
}

/**
 * A compare-and-set from `current` to `changes`, revision + 1. As the store rules require, a
 * move to `executing` takes the effect claim (unless `extra` names one) and a move to
 * `verified` carries a receipt.
 */
export function updateCommit(
  current: ProposalRecord,
  changes: Partial<ProposalRecord>,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence' | 'events'>> = {},
): StoreCommit {
  let next: ProposalRecord = { ...current, ...changes, revision: current.revision + 1 };
  if (next.status === 'verified' && next.receipts.length === 0) {
    next = { ...next, receipts: [{ id: `re-${next.proposal}`, provider: 'test' }] };
  }
  return {
    tenant: current.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: current.revision,
      expectedStatus: current.status,
      record: next,
    },
    events: [draft(current.proposal, 'commit_started', next.status, next.revision)],
    ...(next.status === 'executing' ? { claim: claimFor(next) } : {}),
    ...extra,
  };
}

/** The effect claim of `value`, taken at `atMs`. */
export function claimFor(
  value: ProposalRecord,
  atMs = BASE_MS + 10,
): { effectScope: string; proposal: string; atMs: number } {
  return { effectScope: value.effectScope, proposal: value.proposal, atMs };
}

/** One approval as stored evidence. */
export function evidence(
  tenant: string,
  proposal: string,
  digest: string,
  authority = 'authority:a',
): AuthorityEvidenceRecord {
  return {
    tenant,
    proposal,
    evidenceDigest: digest,
    authority,
    decision: 'approve',
    channelAssurance: 'high',
    issuedAtMs: BASE_MS,
    expiresAtMs: BASE_MS + 60_000,
    recordedAtMs: BASE_MS + 5,
    evidence: { authority, proposal, nested: { list: [1, 'two', null, true] } },
  };
}

/** Commits and asserts it was committed; returns the sealed events. */
export async function mustCommit(
  store: GuardStore,
  write: StoreCommit,
): Promise<readonly LedgerEvent[]> {
  return assertCommitted(await store.commit(write));
}

/** Inserts a proposal and returns what the store now holds. */
export async function seed(
  store: GuardStore,
  value: ProposalRecord,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence'>> = {},
): Promise<ProposalRecord> {
  await mustCommit(store, insertCommit(value, extra));
  const stored = await store.getProposal(value.tenant, value.proposal);
  assert.deepStrictEqual(stored, value);
  return stored as ProposalRecord;
}

/** Moves a stored proposal through `path` one compare-and-set at a time. */
export async function walk(
  store: GuardStore,
  start: ProposalRecord,
  path: readonly ProposalStatus[],
): Promise<ProposalRecord> {
  let current = start;
  for (const status of path) {
    await mustCommit(store, updateCommit(current, { status }));
    const next = await store.getProposal(current.tenant, current.proposal);
    assert.strictEqual(next?.status, status);
    current = next as ProposalRecord;
  }
  return current;
}

/** Everything a tenant holds for `proposals`, to assert that a refused commit changed nothing. */
export async function snapshotTenant(
  store: GuardStore,
  tenant: string,
  proposals: readonly string[],
) {
  return {
    proposals: await Promise.all(proposals.map((id) => store.getProposal(tenant, id))),
    evidence: await Promise.all(proposals.map((id) => store.listEvidence(tenant, id))),
    ledger: await store.readLedger({ tenant }),
    head: await store.ledgerHead(tenant),
  };
}

/** `value` inserted as executing under a lease, with its insert event and `commit_started`. */
export function claimedInsert(
  value: ProposalRecord,
  extra: Partial<Pick<StoreCommit, 'claim'>> = { claim: claimFor(value) },
): StoreCommit {
  const executing: ProposalRecord = {
    ...value,
    revision: 2,
    status: 'executing',
    lease: { owner: 'lease-1', expiresAtMs: BASE_MS + 60_000 },
    dueAtMs: BASE_MS + 60_000,
  };
  return {
    tenant: value.tenant,
    proposal: { kind: 'insert', record: executing },
    events: [
      draft(value.proposal, 'idempotency_decided', 'authorized', 1, { reasonCode: 'x' }),
      draft(value.proposal, 'commit_started', 'executing', 2, { attempt: 1 }),
    ],
    ...extra,
  };
}

/** Sample store records and ledger drafts for store-level tests (the guard never made them). */
import type { LedgerEventDraft } from '../../src/core/ledger.js';
import type { ProposalRecord } from '../../src/core/store.js';

/** The epoch milliseconds every sample record is dated from. */
export const BASE_MS = 1_700_000_000_000;

/** An authorized proposal with effect `sek-<id>` and no snapshot; override what a test needs. */
export function sampleProposal(
  tenant: string,
  id: string,
  overrides: Partial<ProposalRecord> = {},
): ProposalRecord {
  const semanticEffectKey = overrides.semanticEffectKey ?? `sek-${id}`;
  return {
    tenant,
    proposal: id,
    revision: 1,
    status: 'authorized',
    actionType: 'support.refund@1',
    semanticEffectKey,
    effectScope: `support.refund@1#${semanticEffectKey}`,
    principal: 'user:alice',
    agent: null,
    createdAtMs: BASE_MS,
    updatedAtMs: BASE_MS,
    expiresAtMs: BASE_MS + 60_000,
    dueAtMs: null,
    commitment: { algorithm: 'hmac-sha256', keyHandle: 'k', keyVersion: 1, value: 'dg' },
    snapshot: null,
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

/** A `commit_started` draft for `proposal` at `revision`. */
export function sampleDraft(
  proposal: string,
  revision: number,
  data: LedgerEventDraft['data'] = {},
): LedgerEventDraft {
  return {
    proposal,
    type: 'commit_started',
    at: new Date(BASE_MS).toISOString(),
    actionType: 'support.refund@1',
    status: null,
    revision,
    data,
  };
}

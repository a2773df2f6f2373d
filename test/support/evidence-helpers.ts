/**
 * Small helpers for the authority, privacy and ledger tests: build evidence from what `read`
 * returns (never by hand), record it, and look at the ledger.
 */
import {
  type ActionDefinition,
  type AuthorityEvidence,
  buildAuthorityEvidence,
  type ChannelAssurance,
  type GuardResult,
  type LedgerEvent,
  type LedgerEventType,
} from '../../src/index.js';
import { type createHarness, refundArgs } from './guard-harness.js';

export type Harness = ReturnType<typeof createHarness>;

/** The proposer used throughout; it may always read its own proposals. */
export const PRINCIPAL = 'agent-svc';

/** An amount that the harness refund policy sends to 2-of-3 approval. */
export const APPROVAL_AMOUNT = '500.00';

export interface EvidenceOptions {
  readonly decision?: 'approve' | 'reject';
  readonly channelAssurance?: ChannelAssurance;
  /** Epoch ms; defaults to the harness clock's now. */
  readonly issuedAt?: number;
  readonly validForMs?: number;
}

/** Prepares a refund that needs approval and returns the prepare result. */
export async function prepareForApproval(
  harness: Harness,
  overrides: Record<string, unknown> = {},
  action: ActionDefinition = harness.refund,
): Promise<GuardResult> {
  return harness.guard.prepare(action, {
    tenant: harness.tenant,
    input: refundArgs({ amount: APPROVAL_AMOUNT, ...overrides }),
    principal: PRINCIPAL,
  });
}

/** Builds evidence for `proposal` from `read`'s `evidenceBindings`. */
export async function evidenceFor(
  harness: Harness,
  proposal: string,
  authority: string,
  options: EvidenceOptions = {},
  action: ActionDefinition = harness.refund,
): Promise<AuthorityEvidence> {
  const view = await harness.guard.read(action, {
    tenant: harness.tenant,
    proposal,
    reader: PRINCIPAL,
  });
  if (view.evidenceBindings === undefined) {
    throw new Error(`proposal ${proposal} has no evidence bindings (erased?)`);
  }
  return buildAuthorityEvidence(view.evidenceBindings, {
    authority,
    decision: options.decision ?? 'approve',
    channelAssurance: options.channelAssurance ?? 'high',
    issuedAt: options.issuedAt ?? harness.clock.now(),
    ...(options.validForMs === undefined ? {} : { validForMs: options.validForMs }),
  });
}

/** Presents evidence as authenticated by `authenticatedAuthority` (default: its own authority). */
export function present(
  harness: Harness,
  evidence: unknown,
  authenticatedAuthority?: string,
  action: ActionDefinition = harness.refund,
): Promise<GuardResult> {
  const named =
    typeof evidence === 'object' && evidence !== null
      ? (evidence as { authority?: unknown }).authority
      : undefined;
  return harness.guard.recordAuthority(action, {
    tenant: harness.tenant,
    evidence,
    authenticatedAuthority:
      authenticatedAuthority ?? (typeof named === 'string' ? named : 'finance-b'),
  });
}

/** Builds and records one authority's decision on `proposal`. */
export async function decide(
  harness: Harness,
  proposal: string,
  authority: string,
  options: EvidenceOptions = {},
  action: ActionDefinition = harness.refund,
): Promise<GuardResult> {
  const evidence = await evidenceFor(harness, proposal, authority, options, action);
  return present(harness, evidence, authority, action);
}

/** The tenant's sealed ledger, optionally only one proposal's events. */
export function ledgerOf(
  harness: Harness,
  proposal?: string,
  tenant: string = harness.tenant,
): Promise<readonly LedgerEvent[]> {
  return harness.store.readLedger({
    tenant,
    ...(proposal === undefined ? {} : { proposal }),
  });
}

/** The events of one type. */
export function ofType(
  events: readonly LedgerEvent[],
  type: LedgerEventType,
): readonly LedgerEvent[] {
  return events.filter((event) => event.type === type);
}

/** JSONL text → one parsed value per line (a line that is not JSON stays a string). */
export function parseJsonl(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        return line;
      }
    });
}

/** Waits (yielding to the event loop) until `predicate` holds, or fails after `maxTurns`. */
export async function waitUntil(predicate: () => boolean, maxTurns = 1_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (predicate()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error('waitUntil: condition never held');
}

/** The tally of approval evidence in force, as every guard stage counts it (I2, I9). */
import type { ApprovalRule } from '../action.js';
import { type AuthorityTally, tallyAuthority } from '../evidence.js';
import type { AuthorityEvidenceRecord } from '../store.js';
import type { GuardContext } from './guard-context.js';

/** Counts the evidence in force at `nowMs`: expired approvals never count. */
export function tallyInForce(
  context: GuardContext,
  rule: ApprovalRule,
  evidence: readonly AuthorityEvidenceRecord[],
  nowMs: number,
): AuthorityTally {
  if (context.broken('tally_counts_expired')) {
    const neverExpiring = evidence.map((record) => ({
      ...record,
      expiresAtMs: Number.POSITIVE_INFINITY,
    }));
    return tallyAuthority(rule, neverExpiring, nowMs);
  }
  return tallyAuthority(rule, evidence, nowMs);
}

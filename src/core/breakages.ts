/**
 * Test-only breakages: each one switches off exactly one guarantee at the place the guard keeps
 * it, so the verifier, the explorer and unit tests can prove that the evidence judge notices
 * (a judge that never sees a broken guard has never been tested). Reachable only through
 * `createGuardCore` from `src/core`; the public `createGuard` cannot set them and `sideguard`
 * does not export them.
 */
import { ConfigurationError } from './errors.js';

/** One guarantee to switch off. */
export const Breakage = {
  /** Commit to `executing` without taking the semantic-effect claim (I1). */
  effect_claim_skipped: 'effect_claim_skipped',
  /** An unknown outcome goes straight back to `authorized`, unverified, with a new key (I5). */
  resend_without_verification: 'resend_without_verification',
  /** Verification's `unknown` or not-final `absent` counts as a final absence (I5). */
  unknown_treated_as_absent: 'unknown_treated_as_absent',
  /** A live lease is treated as expired, and an expired one as live (I1). */
  lease_check_inverted: 'lease_check_inverted',
  /** Expired approval evidence counts in the tally (I2, I9). */
  tally_counts_expired: 'tally_counts_expired',
  /** The proposal's time to live is not checked before execution (I2). */
  expiry_not_checked: 'expiry_not_checked',
  /** The snapshot is used without verifying it against the proposal commitment (I9). */
  commitment_check_skipped: 'commitment_check_skipped',
  /** Expiry and authority are not checked again after the drift check (`resolve`) returns (I2). */
  recheck_after_resolve_skipped: 'recheck_after_resolve_skipped',
  /** Evidence bound to another proposal's effect key and commitment is accepted (I9). */
  approval_not_bound_to_input: 'approval_not_bound_to_input',
  /**
   * The time of check is read before the store reads that precede the claim, so a slow store lets
   * `commit_started` count a lapsed approval or record a lease that ended before it began (I2).
   */
  check_time_before_store_reads: 'check_time_before_store_reads',
  /**
   * `recordAuthority` stamps the evidence with the time read before its store read of the
   * evidence already counted, so evidence (or a proposal) that lapsed while the store answered is
   * recorded and counted as valid (I9).
   */
  record_time_before_store_read: 'record_time_before_store_read',
  /**
   * A step reported committed whose receipt cannot be recorded counts as a failed one, so the
   * effect is compensated and closed instead of verified, and a write that landed ends in no
   * receipt (I3, I6).
   */
  unknown_step_counted_as_failed: 'unknown_step_counted_as_failed',
  /** Verification attempts never increase, so verification never ends unresolved (I5). */
  verification_counter_frozen: 'verification_counter_frozen',
} as const;
export type Breakage = (typeof Breakage)[keyof typeof Breakage];

/** Asks whether a guarantee is switched off. */
export type BreakageCheck = (breakage: Breakage) => boolean;

const intact: BreakageCheck = () => false;

/**
 * The check a guard context uses: a constant `false` when nothing is broken, so an intact guard
 * pays one call returning a constant per check.
 * @throws ConfigurationError `breakage_unknown` naming the value when the set holds something
 *   that is not a `Breakage`.
 */
export function breakageCheck(breakages: ReadonlySet<Breakage> | undefined): BreakageCheck {
  if (breakages === undefined || breakages.size === 0) return intact;
  const known = new Set<string>(Object.values(Breakage));
  for (const breakage of breakages) {
    if (!known.has(breakage)) {
      throw new ConfigurationError(
        'breakage_unknown',
        `Unknown breakage ${JSON.stringify(breakage)}; known: ${[...known].join(', ')}`,
      );
    }
  }
  const set = new Set(breakages);
  return (breakage) => set.has(breakage);
}

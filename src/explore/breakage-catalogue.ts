/**
 * The breakage catalogue: every deliberate breakage the explorer must catch on its own (from seed
 * 1 of the `mix` workload, within the short tier's budget), next to the few it cannot catch alone
 * and why. The store, harness and host breakages are the explorer's (`ExplorerBreakage`); the
 * core's come from `src/core/breakages.ts` and switch off one guarantee inside the guard.
 */
import type { Breakage } from '../core/breakages.js';
import type { ExplorerBreakage } from './explore-vocabulary.js';

/** Where a breakage lives. */
export type BreakageLayer = 'store' | 'harness' | 'host' | 'core';

/** One catalogued breakage. */
export interface CataloguedBreakage {
  readonly breakage: ExplorerBreakage | Breakage;
  readonly layer: BreakageLayer;
}

/** Breakages the explorer catches alone, in the order the catalogue test runs them. */
export const BREAKAGE_CATALOGUE: readonly CataloguedBreakage[] = [
  { breakage: 'claims_never_block', layer: 'store' },
  { breakage: 'cas_ignores_revision', layer: 'store' },
  { breakage: 'ledger_apart_from_status', layer: 'store' },
  { breakage: 'crash_keeps_parked', layer: 'harness' },
  { breakage: 'retrying_transport', layer: 'host' },
  { breakage: 'effect_claim_skipped', layer: 'core' },
  { breakage: 'resend_without_verification', layer: 'core' },
  { breakage: 'unknown_treated_as_absent', layer: 'core' },
  { breakage: 'lease_check_inverted', layer: 'core' },
  { breakage: 'tally_counts_expired', layer: 'core' },
  { breakage: 'expiry_not_checked', layer: 'core' },
  { breakage: 'recheck_after_resolve_skipped', layer: 'core' },
  { breakage: 'approval_not_bound_to_input', layer: 'core' },
  { breakage: 'verification_counter_frozen', layer: 'core' },
  { breakage: 'record_time_before_store_read', layer: 'core' },
];

/** Breakages the explorer does not catch alone, and why (kept honest, not hidden). */
export const NOT_CAUGHT_ALONE: Readonly<Partial<Record<ExplorerBreakage | Breakage, string>>> = {
  check_time_before_store_reads:
    'needs a clock jump past the lease while execute reads the approvals before its claim — rarer than the short tier reaches from seed 1 of the mix in 400 schedules; the explorer found it in a longer run and its regression seed (corpus fixed-clock-before-claim) fails again with it',
  unknown_step_counted_as_failed:
    'needs an unusable receipt on the first step of refund-and-close while the second commits — rarer than 400 mix schedules from seed 1; the explorer found it at seed 626 of refund-and-close and its regression seed (corpus fixed-odd-receipt-in-partial) fails again with it',
  commitment_check_skipped:
    'only matters when someone edits a stored snapshot under its commitment; no actor of the explorer edits store rows (the store-tampering tests in src/core/guard do)',
  executor_ignores_signal:
    'the fixed guard covers an executor that ignores its signal in its own process, and the settling window covers a request already sent; a second write needs a stall past the settling window in one process while the other resends, which the regression seed of window 2 reaches together with unknown_treated_as_absent',
};

/**
 * Runs every invariant over one schedule's evidence (each linear in the evidence) and returns
 * the violations in the order of `InvariantId`, so the first one names the schedule's failure.
 */
import { InvariantId } from '../explore-vocabulary.js';
import type { ScheduleEvidence, Violation } from '../schedule-evidence.js';
import { checkAuthorityBeforeWrite } from './authority-before-write.js';
import { checkDryRunIsDry } from './dry-run-is-dry.js';
import { indexEvidence } from './evidence-index.js';
import { checkGuardReturnsOutcome } from './guard-returns-outcome.js';
import { checkCrashIsolation, checkLiveness, checkTapeOnly } from './harness-invariants.js';
import { checkLedgerIntact } from './ledger-intact.js';
import { checkNoBlindResend } from './no-blind-resend.js';
import { checkNoSilentPartial } from './no-silent-partial.js';
import { checkOneWritePerEffect } from './one-write-per-effect.js';
import { checkPrivateStaysPrivate } from './private-stays-private.js';
import { checkSingleLeaseOwner } from './single-lease-owner.js';
import { checkStatusReplays } from './status-replays.js';
import { checkWritesClaimed } from './writes-claimed.js';

const ORDER: readonly string[] = Object.values(InvariantId);

/** Every violation of the schedule, most fundamental first. */
export async function checkInvariants(
  evidence: ScheduleEvidence,
  options: { readonly rehashLedger?: boolean } = {},
): Promise<Violation[]> {
  const index = indexEvidence(evidence);
  const violations = [
    ...checkOneWritePerEffect(index),
    ...(await checkAuthorityBeforeWrite(index)),
    ...checkNoBlindResend(index),
    ...checkGuardReturnsOutcome(index),
    ...checkSingleLeaseOwner(index),
    ...checkWritesClaimed(index),
    ...checkDryRunIsDry(index),
    ...checkNoSilentPartial(index),
    ...checkLedgerIntact(index, options.rehashLedger ?? true),
    ...checkStatusReplays(index),
    ...checkPrivateStaysPrivate(index),
    ...checkLiveness(index),
    ...checkCrashIsolation(index),
    ...checkTapeOnly(index),
  ];
  return violations.sort((a, b) => ORDER.indexOf(a.invariant) - ORDER.indexOf(b.invariant));
}

/**
 * Core defects the explorer found that are still open (issue 8's windows 1–4 are fixed; these
 * came after), each with the fault triggers that reach it. The short tier of `npm test` leaves
 * out these triggers so it can gate everything else; the regression corpus keeps one seed per
 * finding that must still fail (`openFinding`). When a fix lands: delete its entry here, and turn
 * its corpus seed into a regression seed (`failsWith`).
 */

/** A fault trigger the simulator can leave out (`ScheduleOptions.avoid`). */
export const FaultTrigger = {
  /**
   * The clock moves while an execute call is between its last check and its claim (its store
   * reads before `commit_started`).
   */
  clock_before_claim: 'clock_before_claim',
  /** A successful create answers with an id the guard cannot record (a lone surrogate). */
  odd_receipt: 'odd_receipt',
} as const;
export type FaultTrigger = (typeof FaultTrigger)[keyof typeof FaultTrigger];

/** One open finding and what triggers it. */
export interface OpenFinding {
  readonly finding: string;
  readonly triggers: readonly FaultTrigger[];
}

/** The core defects still open on this branch. */
export const OPEN_FINDINGS: readonly OpenFinding[] = [
  // None open. Fixed: the time of check read before the store reads that precede the claim
  // (corpus fixed-clock-before-claim, breakage check_time_before_store_reads); a step with an
  // unusable receipt compensated and closed instead of verified (fixed-odd-receipt-in-partial,
  // breakage unknown_step_counted_as_failed).
];

/** Every trigger of an open finding, for `ScheduleOptions.avoid`. */
export function openTriggers(): FaultTrigger[] {
  return [...new Set(OPEN_FINDINGS.flatMap((finding) => finding.triggers))];
}

/**
 * Known defects whose fixes have not landed yet (issue 8's unsafe windows), each with the fault
 * triggers that reach it. The short exploration tier of `npm test` leaves these triggers out so it
 * can gate everything else; the regression corpus keeps one seed per window that must still fail
 * (`pendingFix`). When a fix lands: delete its entry here, and flip its corpus seed to a plain one.
 */

/** A fault trigger the simulator can leave out. */
export const DefectTrigger = {
  /** Provider text that cuts badly (a lone surrogate in a reason or receipt id). */
  odd_text: 'odd_text',
  /** An official client's hidden transport retry. */
  retrying_transport: 'retrying_transport',
  /**
   * Virtual time passing while a provider call (resolve, execute) is in flight or a live
   * executor holds its lease (a stall past the lease before the request leaves).
   */
  time_during_execution: 'time_during_execution',
} as const;
export type DefectTrigger = (typeof DefectTrigger)[keyof typeof DefectTrigger];

/** One pending fix: the window of issue 8 and what triggers it. */
export interface PendingFix {
  readonly window: string;
  readonly triggers: readonly DefectTrigger[];
}

/** The windows of issue 8 still open on this branch. */
export const PENDING_FIXES: readonly PendingFix[] = [
  {
    window: 'time of check after resolve (issue 8, window 1)',
    triggers: ['time_during_execution'],
  },
  {
    window: 'executor outliving its lease (issue 8, window 2)',
    triggers: ['time_during_execution'],
  },
  { window: 'hidden transport retries (issue 8, window 3)', triggers: ['retrying_transport'] },
  { window: 'throwing after the provider wrote (issue 8, window 4)', triggers: ['odd_text'] },
];

/** Every trigger of a pending fix, for `ScheduleOptions.avoid`. */
export function pendingTriggers(): DefectTrigger[] {
  return [...new Set(PENDING_FIXES.flatMap((fix) => fix.triggers))];
}

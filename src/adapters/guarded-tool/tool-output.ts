/**
 * What a guarded tool hands back to an agent loop: one small JSON result per Sideguard outcome,
 * worded for a model. A pending approval or an unconfirmed write is a result that says "do not
 * retry", never an error the loop would retry blindly; a duplicate gets the original result.
 */
import type { JsonValue } from '../../core/canonical-json.js';
import { outcomeOfStatus } from '../../core/guard/guard-context.js';
import type { GuardResult } from '../../core/guard.js';
import type { Receipt } from '../../core/store.js';
import type { Outcome } from '../../core/vocabulary.js';

/** The kinds of tool result, one per way a guarded call can end. */
export const ToolOutputStatus = {
  /** The effect happened (now, or earlier: `duplicate` is then true). */
  done: 'done',
  /** The effect waits for approval; the call must not be retried. */
  approval_pending: 'approval_pending',
  /** An approver rejected it; nothing was done. */
  denied: 'denied',
  /** Policy or contract refused it (blocked, rejected, expired, stale); nothing was done. */
  refused: 'refused',
  /** The write may or may not have happened; Sideguard verifies it with the provider. */
  in_doubt: 'in_doubt',
  /** The provider certainly did not do it. */
  failed: 'failed',
} as const;
export type ToolOutputStatus = (typeof ToolOutputStatus)[keyof typeof ToolOutputStatus];

/** The tool result a model sees. Plain JSON, so every framework can carry it. */
export interface GuardedToolOutput {
  readonly status: ToolOutputStatus;
  /** The proposal the call resolved to (for a duplicate: the original one). */
  readonly proposal: string;
  /** The guard's outcome, e.g. `verified`, `replayed`, `authority_pending`. */
  readonly outcome: string;
  /** One sentence for the model: what happened and whether to retry. */
  readonly message: string;
  /** True when an earlier call already did this effect: this call wrote nothing. */
  readonly duplicate: boolean;
  readonly reasonCode?: string;
  /** The provider's receipts (for `done`). */
  readonly receipts?: readonly Receipt[];
  /** The executor's (or verifier's) output, the same for the original call and duplicates. */
  readonly result?: JsonValue;
}

const MESSAGES: Readonly<Record<ToolOutputStatus, string>> = {
  done: 'Done. The effect happened exactly once; do not call this tool again for it.',
  approval_pending:
    'Waiting for approval. Nothing has been done yet; do not retry — tell the user it awaits approval.',
  denied: 'An approver rejected this. Nothing was done; do not retry it.',
  refused: 'Refused by policy or contract. Nothing was done; do not retry the same call.',
  in_doubt:
    'Sent, but not yet confirmed by the provider. Do not retry: Sideguard verifies it and will not send it twice.',
  failed: 'The provider did not do it. It is safe to try again later.',
};

// Every outcome has a line (the type makes a new outcome a compile error until it is placed).
const STATUS_OF_OUTCOME: Readonly<Record<Outcome, ToolOutputStatus>> = {
  verified: 'done',
  compensated: 'done',
  partially_succeeded: 'done',
  compensation_required: 'done',
  authority_pending: 'approval_pending',
  prepared: 'approval_pending',
  authorized: 'approval_pending',
  denied: 'denied',
  blocked: 'refused',
  rejected: 'refused',
  expired: 'refused',
  stale: 'refused',
  erased: 'refused',
  in_progress: 'in_doubt',
  failed_unknown: 'in_doubt',
  verification_pending: 'in_doubt',
  verification_unresolved: 'in_doubt',
  resend_allowed: 'in_doubt',
  conflict: 'in_doubt',
  failed_known: 'failed',
  // Only reached without a status (a replay is judged by its proposal's status instead).
  replayed: 'refused',
  dry_run_predicted: 'refused',
};

/** The status a guard result means for the model; a duplicate is judged by its proposal's status. */
export function toolOutputStatus(result: GuardResult): ToolOutputStatus {
  const outcome =
    result.outcome === 'replayed' && result.status !== null
      ? outcomeOfStatus(result.status)
      : result.outcome;
  return STATUS_OF_OUTCOME[outcome];
}

/** Turns a guard result into the tool result a model sees. */
export function toolOutputOf(result: GuardResult): GuardedToolOutput {
  const status = toolOutputStatus(result);
  return {
    status,
    proposal: result.proposal,
    outcome: result.outcome,
    message: MESSAGES[status],
    duplicate: result.outcome === 'replayed' && status === 'done',
    ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode }),
    ...(status === 'done' && result.result !== undefined
      ? { receipts: result.result.receipts }
      : {}),
    ...(result.output === undefined ? {} : { result: result.output }),
  };
}

/**
 * The guarded call both doors run for a bound write: prepare the proposal, execute it when the
 * guard allows (once, whatever the retries), settle a duplicate against the original (wait while
 * it executes, reconcile an unknown outcome, fetch the original output), and map the guard's
 * result to a door-neutral verdict. No HTTP or MCP types in here.
 */
import type { ActionDefinition } from '../core/action.js';
import type { JsonValue } from '../core/canonical-json.js';
import type { ContractIssue, Guard, GuardResult } from '../core/guard.js';
import type { Receipt } from '../core/store.js';
import type { Outcome, ProposalStatus } from '../core/vocabulary.js';
import { GUARDED_VERDICT_CODE, GuardedVerdict } from './decision-vocabulary.js';
import type { ExecutionCapture } from './execution-capture.js';

/** What a guarded call needs from the gateway. */
export interface GuardedCallContext {
  readonly guard: Guard;
  readonly capture: ExecutionCapture;
  /** How long a duplicate waits for the original still executing, in ms. */
  readonly inProgressWaitMs: number;
  /** Milliseconds, for the wait's deadline only. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** One bound write, already turned into the action's input. */
export interface GuardedCallRequest {
  /** The executable action (its executor sends the upstream request). */
  readonly action: ActionDefinition;
  readonly tenant: string;
  readonly principal: string;
  readonly agent: string;
  readonly input: unknown;
}

/** A guarded call's result, door-neutral. */
export interface GuardedCallResult {
  readonly verdict: GuardedVerdict;
  /** The wire code for this verdict (`GUARDED_VERDICT_CODE`). */
  readonly code: string;
  readonly proposal: string;
  readonly outcome: Outcome;
  readonly status: ProposalStatus | null;
  readonly reasonCode: string | undefined;
  /** The upstream's answer: the original one for a duplicate, this call's for a refusal. */
  readonly output: JsonValue | undefined;
  readonly receipts: readonly Receipt[];
  readonly issues: readonly ContractIssue[] | undefined;
  /** The effect existed before this call (a duplicate). */
  readonly duplicate: boolean;
}

const STATUS_VERDICT: Readonly<Record<ProposalStatus, GuardedVerdict>> = {
  awaiting_authority: 'pending_approval',
  authorized: 'in_progress',
  denied: 'denied',
  expired: 'not_executable',
  blocked: 'blocked',
  stale: 'not_executable',
  superseded: 'not_executable',
  executing: 'in_progress',
  failed_known: 'upstream_refused',
  failed_unknown: 'outcome_unknown',
  verification_pending: 'outcome_unknown',
  verification_unresolved: 'outcome_unknown',
  partially_succeeded: 'needs_attention',
  verified: 'completed',
  compensation_required: 'needs_attention',
  compensated: 'needs_attention',
  erased: 'not_executable',
};

/** The verdict of a guard result. An accepted write still being confirmed counts as completed. */
export function verdictOf(result: GuardResult): GuardedVerdict {
  if (result.status === null) {
    return result.outcome === 'rejected' ? GuardedVerdict.rejected : GuardedVerdict.not_executable;
  }
  if (result.status === 'verification_pending' && (result.result?.receipts.length ?? 0) > 0) {
    return GuardedVerdict.completed;
  }
  return STATUS_VERDICT[result.status];
}

const MAX_STEPS = 64;
const MAX_EXECUTIONS = 3;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;

/** What settling has done so far; bounds every kind of step. */
interface SettleProgress {
  executions: number;
  reconciled: boolean;
  followed: boolean;
  fetched: boolean;
}

/** The next step towards a settled answer, chosen from the latest guard result alone. */
type SettleStep = 'execute' | 'follow_fresh' | 'wait' | 'reconcile' | 'fetch_output' | 'done';

function nextStep(result: GuardResult, progress: SettleProgress, haveOutput: boolean): SettleStep {
  const receipts = result.result?.receipts.length ?? 0;
  switch (result.status) {
    case 'authorized':
      // Execute once; again only when the guard itself allowed a resend (I5).
      return (progress.executions === 0 || result.outcome === 'resend_allowed') &&
        progress.executions < MAX_EXECUTIONS
        ? 'execute'
        : 'done';
    case 'stale':
      return result.freshProposal !== undefined && !progress.followed ? 'follow_fresh' : 'done';
    case 'executing':
      return 'wait';
    case 'failed_unknown':
    case 'verification_pending':
      if (receipts === 0) return progress.reconciled ? 'done' : 'reconcile';
      return haveOutput || progress.fetched ? 'done' : 'fetch_output';
    case 'verified':
      return haveOutput || progress.fetched ? 'done' : 'fetch_output';
    default:
      return 'done';
  }
}

/** Runs a bound write through the guard. Throws only for misconfiguration or a broken store. */
export async function runGuardedCall(
  context: GuardedCallContext,
  request: GuardedCallRequest,
): Promise<GuardedCallResult> {
  const { guard, capture } = context;
  const { action, tenant } = request;
  let result = await guard.prepare(action, {
    tenant,
    input: request.input,
    principal: request.principal,
    agent: request.agent,
  });
  const duplicate = result.outcome === 'replayed';
  let captured: JsonValue | undefined;
  const progress: SettleProgress = {
    executions: 0,
    reconciled: false,
    followed: false,
    fetched: false,
  };
  const deadline = context.now() + context.inProgressWaitMs;
  let pollMs = FIRST_POLL_MS;
  for (let step = 0; step < MAX_STEPS; step++) {
    const address = { tenant, proposal: result.proposal };
    const next = nextStep(result, progress, captured !== undefined || result.output !== undefined);
    if (next === 'done') break;
    if (next === 'execute') {
      progress.executions += 1;
      try {
        result = await guard.execute(action, address);
      } finally {
        captured = capture.take(address.proposal)?.output ?? captured;
      }
    } else if (next === 'follow_fresh') {
      // Drift: the guard prepared a fresh proposal from the world as it is now; run that one.
      progress.followed = true;
      progress.executions = 0;
      result = await guard.execute(action, { tenant, proposal: result.freshProposal ?? '' });
    } else if (next === 'wait') {
      // The original call is executing (here or in another process): wait for its answer.
      if (context.now() >= deadline) break;
      await context.sleep(pollMs);
      pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
      result = await guard.reconcile(action, address);
    } else if (next === 'reconcile') {
      // An unknown outcome: ask the upstream (when due) instead of ever resending blindly.
      progress.reconciled = true;
      result = await guard.reconcile(action, address);
    } else {
      // The original response lives (encrypted) with the proposal; a replay returns it.
      progress.fetched = true;
      result = await guard.execute(action, address);
    }
  }
  const verdict = verdictOf(result);
  return {
    verdict,
    code: GUARDED_VERDICT_CODE[verdict],
    proposal: result.proposal,
    outcome: result.outcome,
    status: result.status,
    reasonCode: result.reasonCode,
    output: captured ?? result.output,
    receipts: result.result?.receipts ?? [],
    issues: result.issues,
    duplicate,
  };
}

/** A shadow write's verdict: what a dry run predicts, recorded by the caller when not refused. */
export interface ShadowWriteResult {
  readonly verdict: 'recorded' | typeof GuardedVerdict.rejected | typeof GuardedVerdict.blocked;
  readonly code: string;
  readonly proposal: string;
  readonly semanticEffectKey: string | undefined;
  /** What a live call would have done. */
  readonly wouldBe: string | undefined;
  readonly reasonCode: string | undefined;
  readonly issues: readonly ContractIssue[] | undefined;
}

/** Checks a shadow write with a dry run: contract, policy and effect key; nothing is claimed. */
export async function runShadowWrite(
  guard: Guard,
  request: GuardedCallRequest,
): Promise<ShadowWriteResult> {
  const result = await guard.prepare(request.action, {
    tenant: request.tenant,
    input: request.input,
    principal: request.principal,
    agent: request.agent,
    mode: 'dry_run',
  });
  const wouldBe = result.prediction?.wouldBe;
  const verdict =
    result.outcome === 'rejected'
      ? GuardedVerdict.rejected
      : wouldBe === 'blocked'
        ? GuardedVerdict.blocked
        : 'recorded';
  return {
    verdict,
    code: verdict === 'recorded' ? 'shadow_recorded' : GUARDED_VERDICT_CODE[verdict],
    proposal: result.proposal,
    semanticEffectKey: result.semanticEffectKey,
    wouldBe,
    reasonCode: result.reasonCode,
    issues: result.issues,
  };
}

/**
 * `execute`: re-check expiry and authority, run the drift check, take the semantic-effect claim
 * atomically with the move to `executing` under a lease (I1, I2), call the host's executor once,
 * and record what it reported — confirming a reported write with the provider at once.
 */
import type { ActionDefinition, ActionInput } from '../action.js';
import type { JsonValue } from '../canonical-json.js';
import { ConfigurationError, SideguardError, StoreInvariantError } from '../errors.js';
import type { LedgerEventDraft } from '../ledger.js';
import type { ProposalRecord } from '../store.js';
import type { ProposalStatus } from '../vocabulary.js';
import type { ListedEffect } from './authenticated-store.js';
import { recordExecution } from './execution-outcome.js';
import { expire } from './expiry.js';
import {
  after,
  commit,
  draft,
  type GuardContext,
  iso,
  load,
  MAX_CAS_ATTEMPTS,
  reload,
  resultOf,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult, ProposalAddress } from './guard-types.js';
import { type NormalisedExecuteResult, normaliseExecuteResult } from './host-results.js';
import { errorTag, readField, reasonCodeOf, safeText } from './host-text.js';
import { countedAsRunning, grantLease, heldLease, underLease } from './lease.js';
import { prepareProposal } from './prepare.js';
import {
  commitmentData,
  contextOf,
  executedCommitment,
  forgetSnapshotPlaintext,
  openSnapshot,
  outputPart,
  providerKeyOf,
} from './proposal-snapshot.js';
import { tallyInForce } from './tally.js';

/** What one pass of the claim loop decided: an answer, or "look again" after a lost race. */
type Step =
  | { readonly kind: 'done'; readonly result: GuardResult }
  | { readonly kind: 'retry'; readonly current?: ProposalRecord | undefined };

const retry: Step = { kind: 'retry' };
const done = (result: GuardResult): Step => ({ kind: 'done', result });

/** Executes an authorized proposal at most once. */
export async function executeProposal(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<GuardResult> {
  let record = await load(context, action, address);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const step = await executeOnce(context, action, record);
    if (step.kind === 'done') return step.result;
    record = step.current ?? (await reload(context, record));
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

async function executeOnce(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
): Promise<Step> {
  if (record.status === 'verified') {
    return done(
      resultOf(record, 'replayed', {
        reasonCode: 'already_verified',
        ...outputPart(context, record),
      }),
    );
  }
  if (record.status === 'stale' && record.supersededBy !== null) {
    return done(resultOf(record, 'stale', { freshProposal: record.supersededBy }));
  }
  if (record.status !== 'authorized') return done(resultOf(record));
  const checked = await checkStillExecutable(context, action, record);
  if (checked.kind !== 'executable') return checked;
  const { input, facts } = openSnapshot(context, action, record);
  if (action.config.resolve === undefined) {
    return claimAndRun(context, action, record, { input, facts }, checked.now);
  }
  const drift = await checkDrift(context, action, record, input, facts);
  if (drift !== undefined) return drift;
  if (context.broken('recheck_after_resolve_skipped')) {
    return claimAndRun(context, action, record, { input, facts }, checked.now);
  }
  // The drift check may have run for long: decide again, and let the lease start now (window 1:
  // the time of check is the time of use).
  const rechecked = await checkStillExecutable(context, action, record);
  if (rechecked.kind !== 'executable') return rechecked;
  return claimAndRun(context, action, record, { input, facts }, rechecked.now);
}

/** Executable at `now`: the time every check used, which the claim and its lease must use too. */
type Executable = { readonly kind: 'executable'; readonly now: number };

/**
 * The proposal's time to live and the authority in force (I2). The clock is read after the store
 * reads the checks need and nothing is awaited between that read and the claim's
 * `commit_started`, so a slow store cannot make the claim record a lapsed approval or a lease that
 * ended before it began.
 */
async function checkStillExecutable(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
): Promise<Step | Executable> {
  const before = context.clock.now();
  const evidence =
    record.policy.decision === 'require_approval'
      ? await context.store.listEvidence(record.tenant, record.proposal)
      : [];
  const now = context.broken('check_time_before_store_reads') ? before : context.clock.now();
  if (expiredAt(context, record, now)) return done(await expire(context, action, record));
  return (
    (await checkAuthorityInForce(context, action, record, evidence, now)) ?? {
      kind: 'executable',
      now,
    }
  );
}

/** Whether the proposal's time to live is over at `now`. */
const expiredAt = (context: GuardContext, record: ProposalRecord, now: number): boolean =>
  now >= record.expiresAtMs && !context.broken('expiry_not_checked');

/** For a proposal that needed approval: the tally must still be satisfied now (I2, I9). */
async function checkAuthorityInForce(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
  evidence: Awaited<ReturnType<GuardContext['store']['listEvidence']>>,
  now: number,
): Promise<Step | undefined> {
  if (record.policy.decision !== 'require_approval') return undefined;
  const rule = action.approval;
  if (rule === undefined) {
    throw new ConfigurationError(
      'approval_rule_missing',
      `${action.typeName} has no approval rule`,
    );
  }
  const tally = tallyInForce(context, rule, evidence, now);
  if (tally.kind === 'satisfied') return undefined;
  const status: ProposalStatus = tally.kind === 'vetoed' ? 'denied' : 'awaiting_authority';
  const reasonCode = tally.kind === 'vetoed' ? 'rejected_by_authority' : 'authority_lapsed';
  const next = successor(context, record, { status, reasonCode });
  const written = await update(context, record, next, {
    events: [
      draft(
        context,
        tally.kind === 'vetoed' ? 'denied' : 'authority_lapsed',
        record.proposal,
        action.typeName,
        { reasonCode },
        after(next),
      ),
    ],
  });
  return written.kind === 'committed' ? done(resultOf(next)) : retry;
}

/** Runs the host's drift check; material drift makes the proposal stale and prepares a fresh one. */
async function checkDrift<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  record: ProposalRecord,
  input: ActionInput<A>,
  facts: unknown,
): Promise<Step | undefined> {
  const resolve = action.config.resolve;
  if (resolve === undefined) return undefined;
  let resolved: Awaited<ReturnType<typeof resolve>>;
  let kind: unknown;
  try {
    resolved = await resolve(input as never, contextOf(record));
    kind = resolved?.kind;
  } catch (error) {
    throw new SideguardError(
      'resolve_failed',
      `Failed to execute ${record.proposal}: the drift check (resolve) of ${action.typeName} threw, so nothing was claimed or sent; execute again when it can answer (${safeText(error)})`,
      { cause: error, data: { proposal: record.proposal } },
    );
  }
  if (kind !== 'drifted') return undefined;
  const freshId = context.ids.proposal();
  const reasonCode = reasonCodeOf(
    context.keyRing,
    readField(resolved, 'reason') ?? 'drift',
    'reason_not_a_code',
  );
  const next = successor(context, record, {
    status: 'stale',
    reasonCode,
    supersededBy: freshId,
    lease: null,
  });
  const written = await update(context, record, next, {
    events: [
      draft(
        context,
        'drift_detected',
        record.proposal,
        action.typeName,
        { reasonCode, freshProposal: freshId },
        after(next),
      ),
    ],
  });
  if (written.kind !== 'committed') return retry;
  const fresh = await prepareProposal(
    context,
    action,
    {
      tenant: record.tenant,
      input: readField(resolved, 'input') ?? input,
      facts: readField(resolved, 'facts') ?? facts,
      principal: record.principal,
      ...(record.agent === null ? {} : { agent: record.agent }),
    },
    { supersedes: record.proposal, proposal: freshId },
  );
  return done(resultOf(next, 'stale', { freshProposal: fresh.proposal }));
}

/**
 * The move to `executing` at `now`: the claimed record under a fresh lease, the effect claim and
 * the `commit_started` draft that must land in one commit (I1, I3).
 */
function claimOf<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  record: ProposalRecord,
  opened: { readonly input: ActionInput<A>; readonly facts: JsonValue },
  now: number,
) {
  const lease = grantLease(context, action, now);
  const claimed = successor(context, record, { status: 'executing', lease, reasonCode: null });
  const started = draft(
    context,
    'commit_started',
    record.proposal,
    action.typeName,
    {
      providerIdempotencyKey: providerKeyOf(record),
      resendGeneration: record.resendGeneration,
      leaseExpiresAt: iso(lease.expiresAtMs),
      // What is about to be executed, so the judge can check it is what was proposed (I9).
      inputCommitment: commitmentData(
        executedCommitment(context, record, opened.input, opened.facts),
      ),
    },
    after(claimed),
  );
  const claim = {
    effectScope: claimedScope(context, record),
    proposal: record.proposal,
    atMs: now,
  };
  return { claimed, claim, started };
}

/**
 * `run`'s insert and claim in one commit (decision 124): a fresh proposal the policy allowed
 * (no approval, no drift check) is inserted already `executing` — its insert events, then
 * `commit_started` — and executed. The checks `execute` makes before claiming hold for it: it
 * is authorized, needs no authority, and its time to live is checked at the claim's `now`.
 * `listed` is what `prepare` listed for the effect scope. Undefined when it cannot be done that way (expired, or the commit refused: the effect is
 * claimed, the id exists): the caller then inserts it as `prepare` does and executes it, so
 * the outcome is what two commits would give.
 */
export async function insertClaimedAndRun(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
  insertEvents: readonly LedgerEventDraft[],
  listed: ListedEffect | undefined,
): Promise<GuardResult | undefined> {
  if (
    record.status !== 'authorized' ||
    record.policy.decision !== 'allow' ||
    record.supersedes !== null ||
    action.config.resolve !== undefined
  ) {
    return undefined;
  }
  const now = context.clock.now();
  if (expiredAt(context, record, now)) return undefined;
  // `prepare` built and sealed this record in this call; no store has held it yet.
  const { input, facts } = openSnapshot(context, action, record, true);
  const { claimed, claim, started } = claimOf(context, action, record, { input, facts }, now);
  // The claim check takes what `prepare` just listed for the scope instead of a second read
  // (decision 125): a claim taken since makes the store refuse this commit (`effect_claimed`),
  // and the fall-back below claims again with a fresh read. Not listed, the insert applies only
  // while the tenant holds no proposal of the effect (decision 126).
  const written = await commit(
    context,
    {
      tenant: record.tenant,
      proposal: { kind: 'insert', record: claimed },
      claim,
      events: [...insertEvents, started],
      ...(listed === undefined ? { onlyIfEffectUnlisted: true } : {}),
    },
    listed,
  );
  if (written.kind !== 'committed') return undefined;
  forgetSnapshotPlaintext(context, record);
  return recordExecution(
    context,
    action,
    claimed,
    input,
    await runExecutor(context, action, claimed, input),
  );
}

/** Takes the effect claim with the move to `executing` (one commit), then runs the executor. */
async function claimAndRun<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  record: ProposalRecord,
  opened: { readonly input: ActionInput<A>; readonly facts: JsonValue },
  now: number,
): Promise<Step> {
  const { input } = opened;
  const { claimed, claim, started } = claimOf(context, action, record, opened, now);
  const written = await update(context, record, claimed, { claim, events: [started] });
  if (written.kind === 'revision_conflict') return { kind: 'retry', current: written.current };
  if (written.kind === 'effect_claimed') {
    return done(await supersedeByOwner(context, action, record, written.owner));
  }
  if (written.kind !== 'committed') {
    throw new StoreInvariantError(
      'unexpected_commit_result',
      `Unexpected ${written.kind} while claiming`,
    );
  }
  forgetSnapshotPlaintext(context, record);
  return done(
    await recordExecution(
      context,
      action,
      claimed,
      input,
      await runExecutor(context, action, claimed, input),
    ),
  );
}

/**
 * The scope whose claim is taken with the move to `executing` (I1). With the
 * `effect_claim_skipped` breakage the proposal claims a scope of its own, so it never meets
 * another proposal's claim; the provider idempotency key stays the effect's.
 */
const claimedScope = (context: GuardContext, record: ProposalRecord): string =>
  context.broken('effect_claim_skipped')
    ? `${record.effectScope}#unclaimed:${record.proposal}`
    : record.effectScope;

/**
 * Calls the host's executor under the claim's lease; a throw is an unknown outcome, never a
 * resend (I5).
 */
async function runExecutor<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  claimed: ProposalRecord,
  input: ActionInput<A>,
): Promise<NormalisedExecuteResult> {
  const lease = heldLease(claimed);
  try {
    return normaliseExecuteResult(
      context.keyRing,
      await countedAsRunning(context, claimed, () =>
        underLease(context, lease, contextOf(claimed), (hostContext) =>
          action.config.execute(input as never, hostContext),
        ),
      ),
    );
  } catch (error) {
    return { kind: 'failed_unknown', reason: `executor_threw${errorTag(error)}` };
  }
}

/** Another proposal holds the effect: this one is superseded and the caller gets the owner. */
async function supersedeByOwner(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
  owner: string,
): Promise<GuardResult> {
  let current = record;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (current.status !== 'authorized' && current.status !== 'awaiting_authority') break;
    const next = successor(context, current, {
      status: 'superseded',
      reasonCode: 'semantic_effect_claimed',
      supersededBy: owner,
    });
    const written = await update(context, current, next, {
      events: [
        draft(
          context,
          'superseded',
          current.proposal,
          action.typeName,
          { reasonCode: 'semantic_effect_claimed', owner },
          after(next),
        ),
      ],
    });
    if (written.kind === 'committed') break;
    current = await reload(context, current);
  }
  const ownerRecord = await context.store.getProposal(record.tenant, owner);
  if (ownerRecord === undefined) {
    throw new StoreInvariantError(
      'claim_owner_missing',
      `Effect claim owner ${owner} does not exist`,
    );
  }
  return resultOf(ownerRecord, 'replayed', {
    reasonCode: 'semantic_effect_claimed',
    ...outputPart(context, ownerRecord),
  });
}

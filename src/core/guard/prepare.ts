/**
 * `prepare`: validate the contract → decide the policy → resolve the semantic effect → commit
 * the proposal (commitment and encrypted snapshot) with its first ledger events. A dry run walks
 * the same checks and records only its prediction (I4).
 */

import { Buffer } from 'node:buffer';
import type { ActionDefinition } from '../action.js';
import { checkArgument, checkTenant } from '../argument-checks.js';
import {
  type CanonicalText,
  canonicalize,
  encodeCanonical,
  type JsonValue,
} from '../canonical-json.js';
import { computeCommitment } from '../commitment.js';
import { ContractViolationError, SideguardError, StoreInvariantError } from '../errors.js';
import type { LedgerEventDraft } from '../ledger.js';
import type { ProposalRecord } from '../store.js';
import {
  EFFECT_RELEASED_STATUSES,
  type PolicyDecision,
  type ProposalStatus,
} from '../vocabulary.js';
import type { ListedEffect } from './authenticated-store.js';
import {
  after,
  checkAction,
  commit,
  draft,
  type GuardContext,
  iso,
  outcomeOfStatus,
  resultOf,
} from './guard-context.js';
import type {
  ContractIssue,
  DryRunPrediction,
  GuardResult,
  PrepareOptions,
} from './guard-types.js';
import { errorTag, readField, reasonCodeOf, shortText, wellFormed } from './host-text.js';
import {
  commitmentData,
  commitmentPayload,
  effectKeyOf,
  factsDigestData,
  outputPart,
  sealSnapshot,
} from './proposal-snapshot.js';

const MAX_INPUT_BYTES = 64 * 1024;

/**
 * The empty lists a new record starts with, one frozen pair for all: every record is frozen
 * when sealed anyway, and a store that keeps records (the memory store) then keeps no empty
 * array per proposal.
 */
const NO_RECEIPTS: ProposalRecord['receipts'] = Object.freeze([]);
const NO_EVIDENCE: readonly string[] = Object.freeze([]);
const MAX_ISSUES = 20;

/** Links a fresh proposal to the stale one it replaces after drift. */
export interface SupersedeLink {
  readonly supersedes: string;
  readonly proposal: string;
}

/**
 * `run`'s way to insert an authorized proposal already claimed and execute it (decision 124):
 * given the record, its insert events and what `prepare` listed for its effect scope
 * (decision 125) — or undefined when it did not list it, and the insert must then apply only
 * while the tenant holds no proposal of the effect (decision 126) — the execution's answer, or
 * undefined when it was not done that way.
 */
export type ClaimAtInsert = (
  record: ProposalRecord,
  events: readonly LedgerEventDraft[],
  listed: ListedEffect | undefined,
) => Promise<GuardResult | undefined>;

/** Who proposes what, checked. */
interface Proposing {
  readonly tenant: string;
  readonly principal: string;
  readonly agent: string | null;
  readonly mode: 'commit' | 'dry_run';
  readonly proposal: string;
  readonly action: ActionDefinition;
}

/** A contract-valid input in canonical form, with the facts the policy decides on. */
interface ValidInput {
  readonly input: Record<string, unknown>;
  /** The input encoded once, embedded as it is in the commitment and the snapshot. */
  readonly inputText: CanonicalText;
  readonly facts: JsonValue;
  readonly factsJson: string;
  /** The action's preview of the input, canonical; undefined when it has none. */
  readonly preview: JsonValue | undefined;
}

type Validation =
  | { readonly kind: 'valid'; readonly value: ValidInput }
  | {
      readonly kind: 'invalid';
      readonly issues: readonly ContractIssue[];
      readonly reasonCode: string;
    };

const issueOf = (path: string, code: string, error: unknown): ContractIssue => ({
  path,
  code,
  message: shortText(error instanceof Error ? error.message : String(error)),
});

/** Strict contract, canonical JSON and size checks: what is refused here is never stored. */
function validateInput(action: ActionDefinition, options: PrepareOptions): Validation {
  let parsed: ReturnType<typeof action.schema.safeParse>;
  try {
    parsed = action.schema.safeParse(options.input);
  } catch (error) {
    // A getter or proxy in the input threw while the contract read it.
    return {
      kind: 'invalid',
      issues: [
        issueOf('(root)', 'input_unreadable', `the input could not be read${errorTag(error)}`),
      ],
      reasonCode: 'contract_violation',
    };
  }
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, MAX_ISSUES).map((issue) => ({
      path: shortText(issue.path.map(String).join('.'), 120) || '(root)',
      code: String(issue.code),
      message: shortText(issue.message),
    }));
    return { kind: 'invalid', issues, reasonCode: 'contract_violation' };
  }
  const input = parsed.data as Record<string, unknown>;
  let inputText: CanonicalText;
  try {
    inputText = encodeCanonical(input);
  } catch (error) {
    const data = error instanceof SideguardError ? error.data : undefined;
    const path = String(data?.path ?? '(root)');
    return {
      kind: 'invalid',
      issues: [issueOf(path, 'canonical_json_invalid', error)],
      reasonCode: 'canonical_json_invalid',
    };
  }
  let facts: JsonValue = null;
  if (options.facts !== undefined && options.facts !== null) {
    try {
      facts = JSON.parse(canonicalize(options.facts)) as JsonValue;
    } catch (error) {
      return {
        kind: 'invalid',
        issues: [issueOf('facts', 'canonical_json_invalid', error)],
        reasonCode: 'canonical_json_invalid',
      };
    }
  }
  const factsJson = facts === null ? '' : canonicalize(facts);
  if (Buffer.byteLength(inputText.text) + Buffer.byteLength(factsJson) > MAX_INPUT_BYTES) {
    return {
      kind: 'invalid',
      issues: [
        {
          path: '(root)',
          code: 'too_big',
          message: `input is larger than ${MAX_INPUT_BYTES} bytes of canonical JSON`,
        },
      ],
      reasonCode: 'input_too_large',
    };
  }
  const preview = previewOf(action, input);
  if (preview.kind === 'invalid') return preview;
  return {
    kind: 'valid',
    value: {
      input,
      inputText,
      facts,
      factsJson,
      preview: preview.preview,
    },
  };
}

/** The action's preview of a valid input, as canonical JSON; a preview that throws refuses it. */
function previewOf(
  action: ActionDefinition,
  input: Record<string, unknown>,
):
  | { readonly kind: 'valid'; readonly preview: JsonValue | undefined }
  | Extract<Validation, { kind: 'invalid' }> {
  const render = action.config.preview;
  if (render === undefined) return { kind: 'valid', preview: undefined };
  try {
    const preview = render(input as never);
    if (preview === undefined) return { kind: 'valid', preview: undefined };
    return { kind: 'valid', preview: JSON.parse(canonicalize(preview)) as JsonValue };
  } catch (error) {
    // The preview is private: neither it nor the error's message reaches the ledger.
    return {
      kind: 'invalid',
      issues: [
        {
          path: '(preview)',
          code: 'preview_invalid',
          message: `the preview of ${action.typeName} threw or is not canonical JSON${errorTag(error)}`,
        },
      ],
      reasonCode: 'preview_invalid',
    };
  }
}

/** The policy's verdict, checked; or why the guard cannot act on it. */
type PolicyOutcome =
  | {
      readonly kind: 'decided';
      readonly decision: PolicyDecision;
      readonly reasonCode: string;
    }
  | { readonly kind: 'refused'; readonly reasonCode: string; readonly message: string };

const POLICY_DECISIONS: ReadonlySet<unknown> = new Set(['allow', 'require_approval', 'block']);

/**
 * Runs the action's policy and checks its verdict is one the guard can act on. A policy that
 * throws or answers something unusable refuses the proposal (nothing is stored but the
 * refusal); it never makes `prepare` throw.
 */
function decidePolicy(context: GuardContext, who: Proposing, valid: ValidInput): PolicyOutcome {
  const { action } = who;
  let verdict: unknown;
  try {
    verdict = action.config.policy(valid.input, {
      tenant: who.tenant,
      principal: who.principal,
      agent: who.agent,
      mode: who.mode,
      facts: valid.facts,
    });
  } catch (error) {
    return {
      kind: 'refused',
      reasonCode: 'policy_failed',
      // The error's message may quote the input: only its class or code reaches the ledger.
      message: `the policy of ${action.typeName} threw${errorTag(error)}`,
    };
  }
  const decision = readField(verdict, 'decision');
  const reason = readField(verdict, 'reason');
  if (
    !POLICY_DECISIONS.has(decision) ||
    typeof reason !== 'string' ||
    wellFormed(reason) !== reason
  ) {
    return {
      kind: 'refused',
      reasonCode: 'policy_result_invalid',
      message: `the policy of ${action.typeName} must return { decision: 'allow' | 'require_approval' | 'block', reason: string } with well-formed text`,
    };
  }
  if (decision === 'require_approval' && action.approval === undefined) {
    return {
      kind: 'refused',
      reasonCode: 'approval_rule_missing',
      message: `the policy of ${action.typeName} required approval, but the action declares no approval rule`,
    };
  }
  return {
    kind: 'decided',
    decision: decision as PolicyDecision,
    reasonCode: reasonCodeOf(context.keyRing, reason, 'policy_reason_not_a_code'),
  };
}

/** Records why an input was refused; nothing else is stored. */
async function reject(
  context: GuardContext,
  who: Proposing,
  issues: readonly ContractIssue[],
  reasonCode: string,
): Promise<GuardResult> {
  await commit(context, {
    tenant: who.tenant,
    events: [
      draft(context, 'contract_rejected', who.proposal, who.action.typeName, {
        reasonCode,
        mode: who.mode,
        issues: issues.map((issue) => ({ ...issue })),
      }),
    ],
  });
  return {
    proposal: who.proposal,
    status: null,
    outcome: 'rejected',
    revision: 0,
    reasonCode,
    issues,
  };
}

/** Prepares a proposal (or predicts one, in a dry run). */
export async function prepareProposal(
  context: GuardContext,
  action: ActionDefinition,
  options: PrepareOptions,
  link?: SupersedeLink,
  claimAtInsert?: ClaimAtInsert,
): Promise<GuardResult> {
  checkAction(action);
  const mode = options.mode ?? 'commit';
  if (mode !== 'commit' && mode !== 'dry_run') {
    throw new ContractViolationError('invalid_argument', `mode must be 'commit' or 'dry_run'`);
  }
  const who: Proposing = {
    tenant: checkTenant(options.tenant),
    principal: checkArgument('principal', options.principal),
    agent: options.agent === undefined ? null : checkArgument('agent', options.agent),
    mode,
    proposal: link?.proposal ?? context.ids.proposal(),
    action,
  };
  const validation = validateInput(action, options);
  if (validation.kind === 'invalid') {
    return reject(context, who, validation.issues, validation.reasonCode);
  }
  const valid = validation.value;
  const semanticEffectKey = effectKeyOf(context, who.tenant, action, valid.input);
  const effectScope = `${action.typeName}#${semanticEffectKey}`;
  const verdict = decidePolicy(context, who, valid);
  if (verdict.kind === 'refused') {
    const issue = { path: '(policy)', code: verdict.reasonCode, message: verdict.message };
    return reject(context, who, [issue], verdict.reasonCode);
  }
  if (link === undefined && claimAtInsert !== undefined) {
    const effect: NewEffect = {
      semanticEffectKey,
      effectScope,
      initialStatus: 'authorized',
      supersedes: null,
    };
    const ran = await claimUnlisted(context, who, valid, verdict, effect, claimAtInsert);
    if (ran !== undefined) return ran;
  }
  const listed: ListedEffect = {
    effectScope,
    records: await context.store.listProposalsByEffect(who.tenant, effectScope),
  };
  const existing = listed.records.find(
    (record) =>
      !EFFECT_RELEASED_STATUSES.has(record.status) && record.proposal !== link?.supersedes,
  );
  const initialStatus: ProposalStatus =
    verdict.decision === 'block'
      ? 'blocked'
      : verdict.decision === 'allow'
        ? 'authorized'
        : 'awaiting_authority';
  if (mode === 'dry_run') {
    const prediction: DryRunPrediction = existing
      ? { wouldBe: 'replayed', wouldWrite: false, semanticEffectKey, replayOf: existing.proposal }
      : { wouldBe: initialStatus, wouldWrite: initialStatus !== 'blocked', semanticEffectKey };
    return recordDryRun(context, who, valid, verdict, prediction);
  }
  if (existing !== undefined) return replayExisting(context, who, existing, semanticEffectKey);
  return insertProposal(
    context,
    who,
    valid,
    verdict,
    {
      semanticEffectKey,
      effectScope,
      initialStatus,
      supersedes: link?.supersedes ?? null,
    },
    link === undefined && claimAtInsert !== undefined
      ? (record, events) => claimAtInsert(record, events, listed)
      : undefined,
  );
}

/**
 * Decision 126: `run` inserts and claims an allowed new proposal without listing its effect
 * first, on a store that refuses the insert while the tenant holds a proposal of the effect.
 * Undefined when it does not apply or did not land: the caller then lists and goes on.
 */
async function claimUnlisted(
  context: GuardContext,
  who: Proposing,
  valid: ValidInput,
  verdict: { readonly decision: PolicyDecision; readonly reasonCode: string },
  effect: NewEffect,
  claimAtInsert: ClaimAtInsert,
): Promise<GuardResult | undefined> {
  if (
    who.mode !== 'commit' ||
    verdict.decision !== 'allow' ||
    // An action with a drift check is never inserted claimed (decision 124): do not build the
    // proposal twice for it.
    who.action.config.resolve !== undefined ||
    context.store.refusesListedEffects !== true
  ) {
    return undefined;
  }
  const fresh = newProposal(context, who, valid, verdict, effect);
  return claimAtInsert(fresh.record, fresh.events, undefined);
}

async function recordDryRun(
  context: GuardContext,
  who: Proposing,
  valid: ValidInput,
  verdict: { readonly decision: PolicyDecision; readonly reasonCode: string },
  prediction: DryRunPrediction,
): Promise<GuardResult> {
  await commit(context, {
    tenant: who.tenant,
    events: [
      draft(context, 'dry_run_predicted', who.proposal, who.action.typeName, {
        policyDecision: verdict.decision,
        reasonCode: verdict.reasonCode,
        semanticEffectKey: prediction.semanticEffectKey,
        wouldBe: prediction.wouldBe,
        wouldWrite: prediction.wouldWrite,
        ...(prediction.replayOf === undefined ? {} : { replayOf: prediction.replayOf }),
      }),
    ],
  });
  const preview = valid.preview;
  return {
    proposal: who.proposal,
    status: null,
    outcome: 'dry_run_predicted',
    revision: 0,
    reasonCode: verdict.reasonCode,
    semanticEffectKey: prediction.semanticEffectKey,
    prediction,
    ...(preview === undefined ? {} : { preview }),
  };
}

/** A second proposal for a live effect resolves to the existing one instead of a new effect. */
async function replayExisting(
  context: GuardContext,
  who: Proposing,
  existing: ProposalRecord,
  semanticEffectKey: string,
): Promise<GuardResult> {
  await commit(context, {
    tenant: who.tenant,
    events: [
      draft(context, 'retry_resolved', existing.proposal, who.action.typeName, {
        reasonCode: 'semantic_effect_exists',
        attemptedProposal: who.proposal,
        semanticEffectKey,
        existingStatus: existing.status,
      }),
    ],
  });
  return resultOf(existing, 'replayed', {
    reasonCode: 'semantic_effect_exists',
    ...outputPart(context, existing),
  });
}

/** What a new proposal is: its effect, the status the policy gave it, what it replaces. */
interface NewEffect {
  readonly semanticEffectKey: string;
  readonly effectScope: string;
  readonly initialStatus: ProposalStatus;
  readonly supersedes: string | null;
}

async function insertProposal(
  context: GuardContext,
  who: Proposing,
  valid: ValidInput,
  verdict: { readonly decision: PolicyDecision; readonly reasonCode: string },
  effect: NewEffect,
  claimAtInsert:
    | ((
        record: ProposalRecord,
        events: readonly LedgerEventDraft[],
      ) => Promise<GuardResult | undefined>)
    | undefined,
): Promise<GuardResult> {
  const { tenant, proposal } = who;
  const preview = valid.preview;
  const { record, events } = newProposal(context, who, valid, verdict, effect);
  if (claimAtInsert !== undefined && record.status === 'authorized') {
    const ran = await claimAtInsert(record, events);
    if (ran !== undefined) return ran;
  }
  const written = await commit(context, { tenant, proposal: { kind: 'insert', record }, events });
  if (written.kind !== 'committed') {
    throw new StoreInvariantError(
      'proposal_id_collision',
      `The ${context.store.kind} store refused new proposal ${proposal} (${written.kind}); ids must be unique`,
    );
  }
  return resultOf(record, outcomeOfStatus(effect.initialStatus), {
    reasonCode: verdict.reasonCode,
    ...(preview === undefined ? {} : { preview }),
  });
}

/** The new proposal's record (commitment, sealed snapshot) and its insert events, at `now`. */
function newProposal(
  context: GuardContext,
  who: Proposing,
  valid: ValidInput,
  verdict: { readonly decision: PolicyDecision; readonly reasonCode: string },
  effect: NewEffect,
): { readonly record: ProposalRecord; readonly events: LedgerEventDraft[] } {
  const { action, tenant, proposal } = who;
  const now = context.clock.now();
  const preview = valid.preview;
  const base = {
    tenant,
    proposal,
    actionType: action.typeName,
    semanticEffectKey: effect.semanticEffectKey,
    principal: who.principal,
    agent: who.agent,
    expiresAtMs: now + action.proposalTtlMs,
  };
  // One literal, the base's fields written out rather than spread: after a spread, V8 adds each
  // further field on a slow path (≈ 9 % of an action's CPU on the memory store, decision 133).
  const record: ProposalRecord = {
    tenant,
    proposal,
    actionType: base.actionType,
    semanticEffectKey: base.semanticEffectKey,
    principal: base.principal,
    agent: base.agent,
    expiresAtMs: base.expiresAtMs,
    revision: 1,
    status: effect.initialStatus,
    effectScope: effect.effectScope,
    createdAtMs: now,
    updatedAtMs: now,
    dueAtMs: effect.initialStatus === 'blocked' ? null : base.expiresAtMs,
    commitment: computeCommitment(
      context.keyRing,
      'sideguard/proposal/v1',
      commitmentPayload(base, valid.inputText, valid.facts),
    ),
    snapshot: sealSnapshot(context, tenant, proposal, {
      input: valid.inputText,
      ...(valid.facts === null ? {} : { facts: valid.facts }),
      ...(preview === undefined ? {} : { preview }),
    }),
    policy: { decision: verdict.decision, reasonCode: verdict.reasonCode },
    reasonCode: verdict.reasonCode,
    lease: null,
    resendGeneration: 0,
    verificationAttempts: 0,
    receipts: NO_RECEIPTS,
    compensationReceipts: NO_RECEIPTS,
    supersededBy: null,
    supersedes: effect.supersedes,
    countedEvidence: NO_EVIDENCE,
  };
  const events: LedgerEventDraft[] = [
    draft(context, 'contract_validated', proposal, action.typeName, {
      protectedFields: [...action.protectedFields],
      ...(effect.supersedes === null ? {} : { supersedes: effect.supersedes }),
    }),
    draft(context, 'policy_decided', proposal, action.typeName, {
      decision: verdict.decision,
      reasonCode: verdict.reasonCode,
      ...(valid.facts === null ? {} : factsDigestData(context, tenant, proposal, valid.facts)),
    }),
    draft(
      context,
      'idempotency_decided',
      proposal,
      action.typeName,
      {
        decision: 'new_effect',
        semanticEffectKey: effect.semanticEffectKey,
        reasonCode: verdict.reasonCode,
        // What approvals must bind and until when the proposal may execute, in the hash chain
        // rather than only in the store, so a judge reading the ledger needs nothing else.
        proposalCommitment: commitmentData(record.commitment),
        proposalExpiresAt: iso(record.expiresAtMs),
      },
      after(record),
    ),
  ];
  return { record, events };
}

/**
 * A person's approve/reject given in an agent framework's own approval step, recorded as
 * Sideguard evidence bound to one proposal (I9). The arguments the person approved must be the
 * proposal's arguments exactly: approving A never authorizes B, and a decision on a proposal that
 * no longer awaits authority (done, denied, expired) is refused rather than moved elsewhere.
 */
import type { ActionDefinition } from '../../core/action.js';
import { canonicalize } from '../../core/canonical-json.js';
import { ProposalNotFoundError } from '../../core/errors.js';
import { buildAuthorityEvidence } from '../../core/evidence.js';
import type { GuardResult, ProposalView } from '../../core/guard.js';
import { type ChatApprovalOptions, readProposal, type ToolBinding } from './guarded-call.js';

/** What recording one chat decision did. */
export type ChatDecisionResult =
  | {
      readonly kind: 'recorded';
      readonly proposal: string;
      /** The guard's outcome: `authorized`, `authority_pending` (more approvals needed), `denied`. */
      readonly outcome: GuardResult['outcome'];
    }
  | {
      readonly kind: 'refused';
      readonly proposal: string | null;
      readonly reasonCode: string;
      readonly message: string;
    };

/** One decision to record. */
export interface ChatDecision extends ChatApprovalOptions {
  readonly decision: 'approve' | 'reject';
  /** The arguments the person was shown (the tool call's input). */
  readonly input: unknown;
  /** The proposal the framework's approval step named, when it carries one. */
  readonly proposal?: string;
}

const refused = (proposal: string | null, reasonCode: string, message: string) =>
  ({ kind: 'refused', proposal, reasonCode, message }) as const;

const canonicalOrUndefined = (value: unknown): string | undefined => {
  try {
    return canonicalize(value);
  } catch {
    return undefined;
  }
};

/** The live proposal these arguments resolve to, found without creating one (a dry run). */
async function proposalOfArguments(
  binding: ToolBinding,
  action: ActionDefinition,
  input: unknown,
): Promise<string | undefined> {
  const predicted = await binding.guard.prepare(action, {
    tenant: binding.tenant,
    principal: binding.principal,
    input,
    mode: 'dry_run',
  });
  return predicted.prediction?.replayOf;
}

function argumentsProblem(action: ActionDefinition, view: ProposalView, input: unknown) {
  const parsed = action.schema.safeParse(input);
  if (!parsed.success) {
    return refused(
      view.proposal,
      'approval_arguments_invalid',
      'the approved arguments do not match the tool contract',
    );
  }
  const approved = canonicalOrUndefined(parsed.data);
  if (approved === undefined || view.input === undefined || approved !== canonicalize(view.input)) {
    return refused(
      view.proposal,
      'approval_arguments_mismatch',
      'the approved arguments are not the proposal\u2019s arguments; ask for approval of this exact call',
    );
  }
  return undefined;
}

/** The named proposal, or undefined when there is none (or the principal may not read it). */
async function readNamed(binding: ToolBinding, action: ActionDefinition, proposal: string) {
  try {
    return await readProposal(binding, action, proposal);
  } catch (error) {
    if (error instanceof ProposalNotFoundError) return undefined;
    throw error;
  }
}

/**
 * Records a chat decision as evidence bound to the proposal the approved arguments name. Never
 * throws for a refusal: the result says why, and the proposal stays as it was.
 */
export async function recordChatDecision(
  binding: ToolBinding,
  action: ActionDefinition,
  decision: ChatDecision,
): Promise<ChatDecisionResult> {
  // A proposal the framework names is checked by its exact arguments below; otherwise the
  // arguments must name a live proposal.
  const proposal =
    decision.proposal ?? (await proposalOfArguments(binding, action, decision.input));
  if (proposal === undefined) {
    return refused(
      proposal ?? null,
      'approval_arguments_mismatch',
      'no pending proposal has these arguments; an approval of different arguments is refused',
    );
  }
  const view = await readNamed(binding, action, proposal);
  if (view === undefined) {
    return refused(proposal, 'proposal_not_found', 'no such proposal for this tool');
  }
  if (view.status !== 'awaiting_authority' && view.status !== 'authorized') {
    return refused(
      proposal,
      'proposal_not_awaiting_authority',
      `the proposal is ${view.status ?? 'gone'}; a decision on it cannot be recorded again`,
    );
  }
  const problem = argumentsProblem(action, view, decision.input);
  if (problem !== undefined) return problem;
  if (view.evidenceBindings === undefined) {
    return refused(proposal, 'proposal_erased', 'the proposal was erased');
  }
  const evidence = buildAuthorityEvidence(view.evidenceBindings, {
    authority: decision.authority,
    decision: decision.decision,
    channelAssurance: decision.channelAssurance,
    issuedAt: (decision.now ?? Date.now)(),
    ...(decision.validForMs === undefined ? {} : { validForMs: decision.validForMs }),
  });
  const result = await binding.guard.recordAuthority(action, {
    tenant: binding.tenant,
    evidence,
    authenticatedAuthority: decision.authority,
  });
  if (result.outcome === 'rejected') {
    const issue = result.issues?.[0];
    return refused(
      proposal,
      result.reasonCode ?? 'evidence_rejected',
      issue?.message ?? 'evidence rejected',
    );
  }
  return { kind: 'recorded', proposal, outcome: result.outcome };
}

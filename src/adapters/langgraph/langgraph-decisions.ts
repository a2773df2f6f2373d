/**
 * Turns a person's decision on a Sideguard interrupt into bound evidence and the resume value.
 * An approval is recorded now (bound to the interrupt's proposal and its exact arguments) so the
 * resumed graph finds the proposal authorized; a rejection is built bound to the proposal and
 * recorded by the tool as the graph resumes (so the re-run node sees the same proposal, denied).
 */
import { buildAuthorityEvidence } from '../../core/evidence.js';
import {
  type ChatApprovalOptions,
  type ChatDecisionResult,
  readProposal,
  recordChatDecision,
} from '../guarded-tool/index.js';
import type {
  SideguardApprovalDecision,
  SideguardApprovalRequest,
} from './langgraph-approval-request.js';
import { graphToolOrigin } from './langgraph-tool.js';

/** Options of `decideApproval`. */
export interface DecideApprovalOptions extends ChatApprovalOptions {
  readonly decision: 'approve' | 'reject';
}

/**
 * What `decideApproval` did, and the value to resume the graph with: absent when refused, except
 * for a proposal already decided (resuming then lets the tool answer from it).
 */
export interface DecideApprovalResult {
  /** An approval is recorded (or refused) now; a rejection is recorded when the graph resumes. */
  readonly recorded:
    | ChatDecisionResult
    | { readonly kind: 'recorded_on_resume'; readonly proposal: string };
  readonly resume?: SideguardApprovalDecision;
}

const refusedFor = (request: SideguardApprovalRequest, reasonCode: string, message: string) => ({
  recorded: { kind: 'refused', proposal: request.proposal, reasonCode, message } as const,
});

/**
 * Records the person's decision on `request` (an interrupt value of `tool`) and returns what to
 * resume with: `graph.invoke(new Command({ resume: result.resume }), config)`.
 */
export async function decideApproval(
  made: unknown,
  request: SideguardApprovalRequest,
  options: DecideApprovalOptions,
): Promise<DecideApprovalResult> {
  const origin = graphToolOrigin(made);
  if (origin === undefined) {
    return refusedFor(
      request,
      'not_a_sideguard_tool',
      'the tool was not made by sideguardGraphTool',
    );
  }
  if (options.decision === 'approve') {
    const recorded = await recordChatDecision(origin.binding, origin.action, {
      ...options,
      input: request.arguments,
      proposal: request.proposal,
    });
    const resume = {
      kind: 'sideguard.decision',
      proposal: request.proposal,
      decision: 'approve',
    } as const;
    // Already decided (e.g. a parallel call of the same effect ran it): resuming is harmless,
    // the re-run tool answers from the proposal. Any other refusal gives nothing to resume with.
    const settled =
      recorded.kind === 'refused' && recorded.reasonCode === 'proposal_not_awaiting_authority';
    return recorded.kind === 'recorded' || settled ? { recorded, resume } : { recorded };
  }
  const view = await readProposal(origin.binding, origin.action, request.proposal);
  if (view.evidenceBindings === undefined || view.status !== 'awaiting_authority') {
    return refusedFor(
      request,
      'proposal_not_awaiting_authority',
      'the proposal no longer awaits a decision',
    );
  }
  const evidence = buildAuthorityEvidence(view.evidenceBindings, {
    authority: options.authority,
    decision: 'reject',
    channelAssurance: options.channelAssurance,
    issuedAt: (options.now ?? Date.now)(),
    ...(options.validForMs === undefined ? {} : { validForMs: options.validForMs }),
  });
  return {
    recorded: { kind: 'recorded_on_resume', proposal: request.proposal },
    resume: {
      kind: 'sideguard.decision',
      proposal: request.proposal,
      decision: 'reject',
      rejection: { evidence, authority: options.authority },
    },
  };
}

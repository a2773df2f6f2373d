/**
 * `sideguard_proposal`: the status of a proposal by id and what it still needs, for the agent
 * that proposed it (its principal, in its tenant). Anyone else's proposal — or a made-up id —
 * looks exactly like an unknown one. It only reads: it never executes, approves or retries.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProposalNotFoundError } from '../../core/errors.js';
import type { ProposalView } from '../../core/guard.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import { GUARDED_VERDICT_CODE } from '../decision-vocabulary.js';
import type { CompiledAgent } from '../gateway-table.js';
import { verdictOf } from '../guarded-call.js';
import type { McpGateway } from './mcp-gateway.js';
import { actionToolName } from './mcp-tool-directory.js';
import { approvalUrlOf, doorErrorReply, McpDoorCode } from './mcp-tool-reply.js';

/** What each status still needs, in words an agent can act on. */
const STATUS_NEEDS: Readonly<Record<ProposalStatus, string>> = {
  awaiting_authority: 'approval',
  authorized:
    'nothing more from people: call the same tool again with the same arguments to execute it (once)',
  denied: 'nothing: an approver rejected it',
  expired: 'nothing: it expired before it was approved; call the tool again to propose it anew',
  blocked: "nothing: the action's policy blocks it",
  stale: 'nothing: the world changed since it was proposed; a fresh proposal replaced it',
  superseded: 'nothing: a newer proposal for the same effect replaced it',
  executing: 'nothing: it is executing now',
  failed_known: 'nothing: it was certainly not applied; call the tool again to try anew',
  failed_unknown: 'verification: the gateway checks with the upstream whether it happened',
  verification_pending: 'verification: the gateway checks with the upstream whether it happened',
  verification_unresolved: 'an operator: nobody could confirm whether it happened',
  partially_succeeded: 'an operator: part of it happened',
  verified: 'nothing: it happened, once',
  compensation_required: 'an operator: it must be compensated',
  compensated: 'nothing: it was compensated',
  erased: 'nothing: its private data was erased',
};

const PROPOSAL_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

function notFound(): CallToolResult {
  return doorErrorReply(
    null,
    McpDoorCode.proposal_not_found,
    'No proposal with that id exists that this agent may read; use the id a guarded tool returned.',
  );
}

/** What is still needed, with the missing approvals spelled out. */
function needsOf(view: ProposalView): string {
  if (view.status !== 'awaiting_authority') return STATUS_NEEDS[view.status ?? 'erased'];
  const missing = Math.max(0, view.authority.required - view.authority.approvers.length);
  return `${missing} more approval${missing === 1 ? '' : 's'} (approved so far: ${view.authority.approvers.join(', ') || 'nobody'})`;
}

/** Reads the proposal with every declared action until one owns it. */
async function findProposal(
  gateway: McpGateway,
  agent: CompiledAgent,
  proposal: string,
): Promise<ProposalView | undefined> {
  for (const action of gateway.table.actions.values()) {
    try {
      return await gateway.guard.read(action, {
        tenant: agent.tenant,
        proposal,
        reader: agent.principal,
      });
    } catch (error) {
      if (!(error instanceof ProposalNotFoundError)) throw error;
    }
  }
  return undefined;
}

/** Answers `sideguard_proposal`. */
export async function proposalToolReply(
  gateway: McpGateway,
  agent: CompiledAgent,
  args: Readonly<Record<string, unknown>>,
): Promise<CallToolResult> {
  const proposal = args.proposal;
  const extra = Object.keys(args).filter((key) => key !== 'proposal');
  if (typeof proposal !== 'string' || !PROPOSAL_ID.test(proposal) || extra.length > 0) {
    return doorErrorReply(
      null,
      GUARDED_VERDICT_CODE.rejected,
      'Call sideguard_proposal with exactly {"proposal": "<id>"}, the id a guarded tool returned.',
      {
        issues: [
          { path: 'proposal', code: 'invalid_type', message: 'a proposal id string is required' },
        ],
      },
    );
  }
  const view = await findProposal(gateway, agent, proposal);
  if (view === undefined) return notFound();
  const verdict = verdictOf(view);
  const action = gateway.table.actions.get(view.actionType);
  const approvalUrl = approvalUrlOf(gateway.table.consoleUrl, view.proposal);
  const structured: Record<string, unknown> = {
    proposal: view.proposal,
    action: view.actionType,
    ...(action === undefined ? {} : { tool: actionToolName(action) }),
    status: view.status,
    verdict,
    code: GUARDED_VERDICT_CODE[verdict],
    needs: needsOf(view),
    approvals: {
      required: view.authority.required,
      approvedBy: view.authority.approvers,
      rejectedBy: view.authority.rejectedBy,
    },
    receipts: view.result?.receipts ?? [],
    createdAt: view.createdAt,
    expiresAt: view.expiresAt,
    ...(view.reasonCode === undefined ? {} : { reasonCode: view.reasonCode }),
    ...(view.preview === undefined ? {} : { preview: view.preview }),
    ...(approvalUrl === undefined ? {} : { approvalUrl }),
  };
  return {
    content: [
      { type: 'text', text: `${view.proposal}: ${view.status}; needs ${needsOf(view)}.` },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}

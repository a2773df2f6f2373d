/**
 * The approvals service's refusals: one local error class with a stable code per rule, so the
 * console, the CLI and MCP can each translate it (HTTP status, exit code, tool error) without
 * parsing messages. Every refusal is thrown before anything is written.
 */
import { SideguardError } from '../core/errors.js';

/** Why the approvals service refused a request. */
export const ApprovalsRefusal = {
  /** No proposal with that id that this person may see (also: forged ids, other tenants). */
  proposal_not_found: 'proposal_not_found',
  /** The person may see the proposal but is not one of its action's declared approvers. */
  approver_not_declared: 'approver_not_declared',
  /** The person is not one of the action's declared operators. */
  operator_not_declared: 'operator_not_declared',
  /** This approver already approved or denied this proposal. */
  already_decided: 'already_decided',
  /** The proposal no longer waits for approval (decided, expired, superseded, executing, …). */
  proposal_not_pending: 'proposal_not_pending',
  /** The proposal's time to live ended before the decision was recorded. */
  proposal_expired: 'proposal_expired',
  /** The guard refused the evidence (e.g. the approver's channel assurance is too low). */
  evidence_refused: 'evidence_refused',
  /** The proposal is not in a state an operator may resolve. */
  proposal_not_resolvable: 'proposal_not_resolvable',
  /** A malformed argument (reason too long, bad receipt, …). */
  invalid_request: 'invalid_request',
  /** Wrong approver id or secret (never says which). */
  authentication_failed: 'authentication_failed',
} as const;
export type ApprovalsRefusal = (typeof ApprovalsRefusal)[keyof typeof ApprovalsRefusal];

/** A refusal by the approvals service. Nothing was changed. Branch on `code`. */
export class ApprovalsError extends SideguardError {
  declare readonly code: ApprovalsRefusal;
  constructor(
    code: ApprovalsRefusal,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, options);
  }
}

/** The one not-found answer: the same for a forged id, another tenant's and an unreadable one. */
export const proposalNotFound = (proposal: string): ApprovalsError =>
  new ApprovalsError(
    'proposal_not_found',
    `Proposal ${JSON.stringify(proposal.slice(0, 200))} was not found (or you may not see it); check the id or ask for the link again`,
  );

/**
 * The approvals service (issue 11): the one implementation behind the console, the CLI and MCP.
 * See docs/decisions/090-one-approvals-service.md for the API's promises.
 */

export { ApprovalsError, ApprovalsRefusal } from './approvals-errors.js';
export {
  type ApprovalsService,
  type ApprovalsServiceConfig,
  createApprovalsService,
  type DecisionOptions,
  MAX_REASON_LENGTH,
  type ResolveOptions,
  STUCK_STATUSES,
} from './approvals-service.js';
export type {
  ApprovalsAddress,
  ApprovalTally,
  AuthorityDecision,
  DecisionRecorded,
  PendingFilter,
  PendingItem,
  ProposalDetails,
  ProposalTimeline,
  ResolutionRecorded,
  StuckItem,
} from './approvals-types.js';
export {
  type ApproverChannel,
  type ApproverConfig,
  type ApproverRegistry,
  type AuthenticatedApprover,
  checkApprovers,
  createApproverRegistry,
} from './approver-registry.js';
export {
  type HashApproverSecretOptions,
  hashApproverSecret,
  MIN_APPROVER_SECRET_LENGTH,
  parseApproverSecretHash,
  verifyApproverSecret,
} from './approver-secret.js';

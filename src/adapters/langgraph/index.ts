/**
 * `sideguard/langgraph`: declared actions as tools for LangGraph graphs (`@langchain/langgraph`
 * and `@langchain/core`, optional peers): pending approval is an `interrupt()` carrying the
 * proposal, resumed by a `Command` with the decision. See the README's "Use with your agent".
 */
export {
  type ChatApprovalOptions,
  type ChatDecisionResult,
  type GuardedToolOutput,
  ToolOutputStatus,
} from '../guarded-tool/index.js';
export {
  isSideguardApprovalDecision,
  isSideguardApprovalRequest,
  type SideguardApprovalDecision,
  type SideguardApprovalRequest,
} from './langgraph-approval-request.js';
export {
  type DecideApprovalOptions,
  type DecideApprovalResult,
  decideApproval,
} from './langgraph-decisions.js';
export { type SideguardGraphToolOptions, sideguardGraphTool } from './langgraph-tool.js';

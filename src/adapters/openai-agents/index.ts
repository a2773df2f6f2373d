/**
 * `sideguard/openai-agents`: declared actions as OpenAI Agents SDK tools (`@openai/agents`, an
 * optional peer), with run interruptions driving Sideguard approval. See the README's "Use with
 * your agent".
 */
export {
  type ChatApprovalOptions,
  type ChatDecisionResult,
  type GuardedToolOutput,
  ToolOutputStatus,
} from '../guarded-tool/index.js';
export {
  approveInterruption,
  describeInterruption,
  rejectInterruption,
  type SideguardInterruption,
} from './openai-agents-approvals.js';
export { type SideguardAgentToolOptions, sideguardAgentTool } from './openai-agents-tool.js';

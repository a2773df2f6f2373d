/**
 * `sideguard/ai-sdk`: declared actions as Vercel AI SDK tools (`ai` 6 or 7, an optional peer),
 * with the SDK's tool-approval step driving Sideguard approval. See the README's "Use with your
 * agent".
 */

export {
  type ChatApprovalOptions,
  type GuardedToolOutput,
  ToolOutputStatus,
} from '../guarded-tool/index.js';
export {
  type RecordToolApprovalsOptions,
  recordToolApprovals,
  type ToolApprovalRecord,
} from './ai-sdk-approvals.js';
export { type SideguardToolOptions, sideguardTool } from './ai-sdk-tool.js';

/**
 * What the framework adapters share (`sideguard/ai-sdk`, `sideguard/openai-agents`,
 * `sideguard/langgraph`): proposing a tool call to the guard, the tool result a model sees, and
 * recording a chat approval as bound evidence. Imports no agent framework.
 */
export {
  type ChatDecision,
  type ChatDecisionResult,
  recordChatDecision,
} from './chat-approval.js';
export {
  type ChatApprovalOptions,
  callNeedsApproval,
  proposeCall,
  readProposal,
  runCall,
  type ToolBinding,
} from './guarded-call.js';
export {
  type GuardedToolOutput,
  ToolOutputStatus,
  toolOutputOf,
  toolOutputStatus,
} from './tool-output.js';

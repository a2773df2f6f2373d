/**
 * The seams other parts plug into the MCP door: the gateway's decision log, shadow state,
 * the operator's log, and the in-client approval round trip (issue 11: `input_required` with a
 * signed `requestState` for 2026-07-28 clients, elicitation for 2025-11-25 ones). Every hook is
 * optional; without them the door answers pending approvals at once with the proposal id.
 */
import type {
  CallToolResult,
  InputRequiredResult,
  ServerContext,
} from '@modelcontextprotocol/server';
import type { ActionDefinition } from '../../core/action.js';
import type { GatewayDecisionEvent } from '../decision-log.js';
import type { CompiledAgent } from '../gateway-table.js';
import type { GuardedCallResult } from '../guarded-call.js';

/** A shadow-mode write the door checked by a dry run and answered without sending. */
export interface McpShadowWrite {
  readonly tenant: string;
  readonly upstream: string;
  readonly tool: string;
  readonly binding: string;
  readonly agent: string;
  readonly proposal: string;
  readonly semanticEffectKey: string | undefined;
  /** Keyed digest of the arguments (see `McpGateway.digestArguments`). */
  readonly argumentsDigest: string;
  /** The arguments themselves: private, to be kept only sealed (the shadow state seals them). */
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** A guarded call that waits for approval, as the approval hook sees it. */
export interface McpPendingApproval {
  /** `modern` (2026-07-28) or `legacy` (2025-era) for the instance serving the call. */
  readonly era: 'legacy' | 'modern';
  readonly agent: CompiledAgent;
  readonly action: ActionDefinition;
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly result: GuardedCallResult;
  /** The SDK's request context (`ctx.mcpReq.requestState()`, `inputResponses`, `elicitInput`). */
  readonly context: ServerContext;
}

/** Optional hooks of the MCP door. */
export interface McpDoorHooks {
  /**
   * Every decision, after it was taken, as the gateway's decision event (`door: 'mcp'`); under
   * `sideguard serve` it goes to the decision log. The answer waits for a returned promise (the
   * log's back-pressure), so resolve it quickly; a throw is reported and ignored.
   */
  readonly onDecision?: (event: GatewayDecisionEvent) => void | Promise<void>;
  /** Records a shadow-mode write (the gateway's shadow state). */
  readonly onShadowWrite?: (write: McpShadowWrite) => void | Promise<void>;
  /**
   * Answers a call pending approval instead of the default result (the proposal id and the
   * console URL). Return `undefined` to keep the default. Must never wait for a person.
   */
  readonly pendingApproval?: (
    pending: McpPendingApproval,
  ) => Promise<CallToolResult | InputRequiredResult | undefined>;
  /**
   * Verifies a 2026-07-28 `requestState` before the handler runs (the SDK's
   * `requestState.verify`); throw to refuse it. Its resolved value is what
   * `ctx.mcpReq.requestState()` returns. Leave it unset for the door's own approval round trip
   * (`mcp-approval-round.ts`), which reads and checks the raw state itself.
   */
  readonly requestStateVerify?: (state: string, context: ServerContext) => unknown;
  /** Operator-facing problems (an upstream that cannot be reached, a failing hook). */
  readonly onProblem?: (message: string) => void;
}

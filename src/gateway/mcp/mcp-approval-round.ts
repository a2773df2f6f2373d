/**
 * Approval inside the MCP client, never by holding a call open. A guarded call that waits for
 * approval answers at once with a signed `requestState` bound to the proposal, the agent, the
 * tool, the arguments' digest and an expiry: on the 2026-07-28 era as an `input_required` result
 * whose URL-mode elicitation sends the person to the console page of the proposal (when the
 * client takes URL elicitations and a console is configured), otherwise inside the pending tool
 * result. A retry carrying the state (the protocol's `requestState`, or `_meta` key
 * `io.sideguard/requestState`) answers pending until the proposal is approved, then executes that
 * one proposal — once, however often it is retried (the guard's effect claim enforces it). A
 * forged, expired, another agent's or re-targeted state is refused and nothing runs.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { JsonValue } from '../../core/canonical-json.js';
import { ProposalNotFoundError } from '../../core/errors.js';
import type { ProposalView } from '../../core/guard.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import { GUARDED_VERDICT_CODE, GuardedVerdict } from '../decision-vocabulary.js';
import { type GuardedCallResult, runGuardedCall, verdictOf } from '../guarded-call.js';
import type { McpGateway } from './mcp-gateway.js';
import {
  mintRequestState,
  REQUEST_STATE_META_KEY,
  type RequestStateClaims,
  readRequestState,
} from './mcp-request-state.js';
import { parseToolResultOutput } from './mcp-result-output.js';
import {
  approvalUrlOf,
  doorErrorReply,
  type GuardedReplyParts,
  guardedReply,
  VERDICT_HINT,
} from './mcp-tool-reply.js';
import type { McpAnswered, McpWrite } from './mcp-write-call.js';

/** Codes of a refused `requestState`. */
export const RequestStateCode = {
  /** Not a state this gateway made, or altered. */
  request_state_invalid: 'request_state_invalid',
  /** Its expiry (the proposal's) has passed. */
  request_state_expired: 'request_state_expired',
  /** Made for another agent, principal or tenant. */
  request_state_not_yours: 'request_state_not_yours',
  /** Made for another tool or other arguments. */
  request_state_retargeted: 'request_state_retargeted',
} as const;

/** The `inputRequests` key of the console elicitation. */
export const APPROVAL_INPUT_KEY = 'sideguard_approval';

/**
 * Statuses in which the proposal holds its effect, so the same call resolves to it (a replay)
 * and the guard runs, finishes or reports that one proposal.
 */
const HOLDS_EFFECT: ReadonlySet<ProposalStatus> = new Set<ProposalStatus>([
  'authorized',
  'executing',
  'failed_unknown',
  'verification_pending',
  'verification_unresolved',
  'partially_succeeded',
  'verified',
  'compensation_required',
  'compensated',
]);

/** The state a call carries: the protocol field (2026-07-28) or the `_meta` key (any era). */
export function requestStateOf(context: ServerContext | undefined): unknown {
  const fromProtocol = context?.mcpReq?.requestState?.();
  if (fromProtocol !== undefined) return fromProtocol;
  return (context?.mcpReq?._meta as Record<string, unknown> | undefined)?.[REQUEST_STATE_META_KEY];
}

/** Whether the 2026-07-28 client said it takes URL-mode elicitations. */
function takesUrlElicitation(context: ServerContext | undefined): boolean {
  const envelope = context?.mcpReq?.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { elicitation?: { url?: unknown } }
    | undefined;
  return capabilities?.elicitation?.url !== undefined;
}

/** The door's reply parts for a result of this write. */
export function replyParts(
  gateway: McpGateway,
  write: McpWrite,
  result: GuardedCallResult,
  extra?: Record<string, unknown>,
): GuardedReplyParts {
  const approvalUrl =
    result.verdict === GuardedVerdict.pending_approval
      ? approvalUrlOf(gateway.table.consoleUrl, result.proposal)
      : undefined;
  const upstreamResult =
    write.target.kind === 'binding' ? parseToolResultOutput(result.output) : undefined;
  return {
    tool: write.call.name,
    actionType: write.request.action.typeName,
    ...(approvalUrl === undefined ? {} : { approvalUrl }),
    ...(upstreamResult === undefined ? {} : { upstreamResult }),
    ...(write.target.kind === 'action' && result.output !== undefined
      ? { output: result.output as JsonValue }
      : {}),
    ...(extra === undefined ? {} : { extra }),
  };
}

/** A pending answer carrying `state` (in the result and its `_meta`). */
function pendingWithState(
  gateway: McpGateway,
  write: McpWrite,
  result: GuardedCallResult,
  state: string,
): CallToolResult {
  const answer = guardedReply(
    result,
    replyParts(gateway, write, result, {
      requestState: state,
      hint: `${VERDICT_HINT.pending_approval} To resume exactly this proposal, retry with the same arguments and this requestState (as the protocol's requestState or _meta["${REQUEST_STATE_META_KEY}"]).`,
    }),
  );
  return { ...answer, _meta: { ...answer._meta, [REQUEST_STATE_META_KEY]: state } };
}

/** The first answer to a call that now waits for approval. */
export async function answerPendingApproval(
  gateway: McpGateway,
  write: McpWrite,
  result: GuardedCallResult,
): Promise<CallToolResult | InputRequiredResult> {
  const { agent, request, call } = write;
  const view = await gateway.guard.read(request.action, {
    tenant: agent.tenant,
    proposal: result.proposal,
    reader: agent.principal,
  });
  const state = mintRequestState(gateway.keyRing, {
    proposal: result.proposal,
    tenant: agent.tenant,
    agent: agent.id,
    principal: agent.principal,
    tool: call.name,
    argumentsDigest: gateway.digestArguments(call.arguments),
    expiresAtMs: Date.parse(view.expiresAt),
  });
  const url = approvalUrlOf(gateway.table.consoleUrl, result.proposal);
  const named = (request.action.approval?.authorities.length ?? 0) > 0;
  if (call.era === 'modern' && url !== undefined && named && takesUrlElicitation(call.context)) {
    return inputRequired({
      inputRequests: {
        [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({
          message: `${request.action.typeName} needs approval by ${describeRule(view)}. An approver opens this page, logs in and decides; nothing runs before that.`,
          url,
        }),
      },
      requestState: state,
    });
  }
  return pendingWithState(gateway, write, result, state);
}

function describeRule(view: ProposalView): string {
  const { required } = view.authority;
  return `${required} declared approver${required === 1 ? '' : 's'}`;
}

function refused(code: string, hint: string): McpAnswered {
  return { answer: doorErrorReply('guarded', code, hint), code };
}

/** The claims of a genuine state for this very call, or the refusal. */
function checkState(
  gateway: McpGateway,
  write: McpWrite,
  state: unknown,
): RequestStateClaims | McpAnswered {
  const verdict = readRequestState(gateway.keyRing, state, gateway.now());
  if (verdict.kind === 'invalid') {
    return verdict.reason === 'expired'
      ? refused(
          RequestStateCode.request_state_expired,
          'This requestState has expired with its proposal; nothing was run. Call the tool again without it to propose anew.',
        )
      : refused(
          RequestStateCode.request_state_invalid,
          'This requestState was not issued by this gateway or was altered; nothing was run. Use the requestState exactly as it was returned, or call again without it.',
        );
  }
  const { claims } = verdict;
  const { agent } = write;
  if (
    claims.agent !== agent.id ||
    claims.principal !== agent.principal ||
    claims.tenant !== agent.tenant
  ) {
    return refused(
      RequestStateCode.request_state_not_yours,
      'This requestState was issued to another agent; nothing was run. Only the agent that proposed may resume it.',
    );
  }
  if (
    claims.tool !== write.call.name ||
    claims.argumentsDigest !== gateway.digestArguments(write.call.arguments)
  ) {
    return refused(
      RequestStateCode.request_state_retargeted,
      'This requestState belongs to another tool or other arguments; nothing was run. Retry with exactly the arguments of the original call, or call without the requestState to propose this one.',
    );
  }
  return claims;
}

/** A pending result made from the proposal as it is now. */
function pendingOf(view: ProposalView): GuardedCallResult {
  return {
    verdict: GuardedVerdict.pending_approval,
    code: GUARDED_VERDICT_CODE.pending_approval,
    proposal: view.proposal,
    outcome: 'authority_pending',
    status: view.status,
    reasonCode: view.reasonCode,
    output: undefined,
    receipts: [],
    issues: undefined,
    duplicate: true,
  };
}

/** Resumes the proposal a genuine state names: pending, executed once, or why it cannot run. */
export async function resumeWithState(
  gateway: McpGateway,
  write: McpWrite,
  state: unknown,
): Promise<McpAnswered> {
  const claims = checkState(gateway, write, state);
  if ('answer' in claims) return claims;
  let view: ProposalView;
  try {
    view = await gateway.guard.read(write.request.action, {
      tenant: claims.tenant,
      proposal: claims.proposal,
      reader: claims.principal,
    });
  } catch (error) {
    if (!(error instanceof ProposalNotFoundError)) throw error;
    return refused(
      RequestStateCode.request_state_invalid,
      'The proposal of this requestState no longer exists; nothing was run.',
    );
  }
  const event = { proposal: view.proposal, outcome: view.outcome };
  if (view.status === 'awaiting_authority') {
    const result = pendingOf(view);
    return {
      answer: pendingWithState(gateway, write, result, state as string),
      code: result.code,
      ...event,
    };
  }
  if (view.status === null || !HOLDS_EFFECT.has(view.status)) {
    const verdict = verdictOf(view);
    const code = GUARDED_VERDICT_CODE[verdict];
    return {
      answer: doorErrorReply(
        'guarded',
        code,
        `The proposal of this requestState is ${view.status ?? 'erased'}; nothing was run. ${VERDICT_HINT[verdict]}`,
        { proposal: view.proposal, status: view.status },
      ),
      code,
      ...event,
    };
  }
  const result = await runGuardedCall(gateway.guardedCall, write.request);
  return {
    answer: guardedReply(result, replyParts(gateway, write, result)),
    code: result.code,
    proposal: result.proposal,
    outcome: result.outcome,
  };
}

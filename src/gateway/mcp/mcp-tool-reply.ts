/**
 * The MCP door's answers. Every answer is a tool result, never a protocol error: a refusal is an
 * `isError` result whose `structuredContent.code` is the same code the HTTP door uses, with a
 * hint the agent can act on. A guarded call's result carries the decision, the outcome, the
 * proposal id and the receipt; a duplicate carries the original upstream answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { JsonValue } from '../../core/canonical-json.js';
import type { UpstreamToolReply, UpstreamToolResult } from '../config-types.js';
import type { Decision } from '../decide-call.js';
import { type DecisionKind, GuardedVerdict } from '../decision-vocabulary.js';
import type { GuardedCallResult, ShadowWriteResult } from '../guarded-call.js';

/** Codes of answers that are not a decision's refusal or a guarded verdict. */
export const McpDoorCode = {
  /** The upstream MCP server could not be started or reached; nothing was sent. */
  upstream_unavailable: 'upstream_unavailable',
  /** The upstream did not answer in time; whether a read ran is unknown (reads only). */
  upstream_timeout: 'upstream_timeout',
  /** The upstream refused the call itself (a JSON-RPC error such as invalid params). */
  upstream_error: 'upstream_error',
  /** A shadow-mode write was checked by a dry run and recorded, not sent. */
  shadow_recorded: 'shadow_recorded',
  /** `sideguard_proposal` found no proposal by that id that this agent may read. */
  proposal_not_found: 'proposal_not_found',
  /** The gateway itself failed (its store is unreachable): nothing was decided. */
  gateway_error: 'gateway_error',
} as const;
export type McpDoorCode = (typeof McpDoorCode)[keyof typeof McpDoorCode];

/** Where a person approves a proposal, when approvals have a console. */
export function approvalUrlOf(
  consoleUrl: string | undefined,
  proposal: string,
): string | undefined {
  return consoleUrl === undefined
    ? undefined
    : `${consoleUrl.replace(/\/+$/, '')}/proposals/${encodeURIComponent(proposal)}`;
}

/** What the agent should do about each guarded verdict (the refusals carry it as `hint`). */
export const VERDICT_HINT: Readonly<Record<GuardedVerdict, string>> = {
  completed: 'Done. Calling again with the same arguments returns this result and writes nothing.',
  pending_approval:
    'Waiting for approval; nothing was sent. Call sideguard_proposal with this proposal id to see what is still needed, then call this tool again with the same arguments once it is approved.',
  blocked: "The action's policy blocks this call; do not retry it.",
  denied: 'An approver rejected this proposal; do not retry it.',
  rejected: "The arguments break the action's contract (see issues); fix them and call again.",
  in_progress:
    'The same effect is executing right now; call again later with the same arguments to get its result.',
  upstream_refused:
    'The upstream did not apply it; check the reason, change what it needs and call again.',
  outcome_unknown:
    'Nobody knows yet whether it happened; the gateway is checking with the upstream and will not resend blindly. Call again later with the same arguments, or use sideguard_proposal.',
  needs_attention: 'Part of it happened; an operator must settle it. Do not retry.',
  not_executable:
    'This proposal can no longer run (expired, stale or erased); call again to propose it anew.',
};

/** Verdicts that are not failures: the call was accepted (done or waiting for a person). */
const NOT_ERRORS: ReadonlySet<GuardedVerdict> = new Set([
  GuardedVerdict.completed,
  GuardedVerdict.pending_approval,
]);

/** A tool result with `structured` as its `structuredContent` and its JSON as text too. */
function reply(
  summary: string,
  structured: Record<string, unknown>,
  isError: boolean,
  upstreamContent: readonly Readonly<Record<string, unknown>>[] = [],
): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      ...(upstreamContent as CallToolResult['content']),
      // 2025-11-25 clients that ignore structuredContent still get it, as JSON text.
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  };
}

/** A refusal (`deny` or `miss`): its reason code and hint. */
export function refusalReply(
  decision: Extract<Decision, { kind: 'deny' | 'miss' }>,
  tool: string,
): CallToolResult {
  return reply(
    `${decision.reason}: ${decision.hint}`,
    { decision: decision.kind, code: decision.reason, hint: decision.hint, tool },
    true,
  );
}

/** An answer the door gives when it could not complete what was decided. */
export function doorErrorReply(
  decision: DecisionKind | null,
  code: McpDoorCode | string,
  hint: string,
  extra: Record<string, unknown> = {},
): CallToolResult {
  return reply(`${code}: ${hint}`, { decision, code, hint, ...extra }, true);
}

/** The answer of a forwarded read: the upstream's result, unchanged except for `_meta`. */
export function forwardReply(upstreamReply: UpstreamToolReply, upstream: string): CallToolResult {
  switch (upstreamReply.kind) {
    case 'result':
      return {
        content: upstreamReply.content as CallToolResult['content'],
        ...(upstreamReply.structuredContent === undefined
          ? {}
          : { structuredContent: upstreamReply.structuredContent }),
        ...(upstreamReply.isError === true ? { isError: true } : {}),
        _meta: { 'sideguard/decision': 'forward' },
      };
    case 'error':
      return doorErrorReply(
        'forward',
        McpDoorCode.upstream_error,
        `Upstream "${upstream}" refused the call (JSON-RPC ${upstreamReply.code}: ${upstreamReply.message}); check the arguments.`,
      );
    case 'no_response':
      return upstreamReply.reason === 'not_sent'
        ? doorErrorReply(
            'forward',
            McpDoorCode.upstream_unavailable,
            `Upstream MCP server "${upstream}" cannot be reached right now; nothing was sent. Try again later.`,
          )
        : doorErrorReply(
            'forward',
            McpDoorCode.upstream_timeout,
            `Upstream MCP server "${upstream}" did not answer in time. This tool only reads: calling it again is safe.`,
          );
  }
}

/** Extra parts of a guarded answer the door knows besides the guarded call's result. */
export interface GuardedReplyParts {
  readonly tool: string;
  readonly actionType: string;
  /** `consoleUrl/proposals/ID` when approvals have a console. */
  readonly approvalUrl?: string;
  /** A wrapped tool's answer: the original one for a duplicate. */
  readonly upstreamResult?: UpstreamToolResult;
  /** A declared action's private output (its executor's answer). */
  readonly output?: JsonValue;
  /** Fields added to (or replacing) the structured content, e.g. a `requestState`. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The answer of a guarded call, door-neutral result → MCP tool result. */
export function guardedReply(result: GuardedCallResult, parts: GuardedReplyParts): CallToolResult {
  const receipt = result.receipts[0] ?? null;
  const failed = !NOT_ERRORS.has(result.verdict);
  const structured: Record<string, unknown> = {
    decision: 'guarded',
    code: result.code,
    verdict: result.verdict,
    outcome: result.outcome,
    status: result.status,
    proposal: result.proposal,
    action: parts.actionType,
    receipt,
    duplicate: result.duplicate,
    ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode }),
    ...(result.issues === undefined ? {} : { issues: result.issues }),
    ...(parts.approvalUrl === undefined ? {} : { approvalUrl: parts.approvalUrl }),
    ...(result.verdict === GuardedVerdict.completed ? {} : { hint: VERDICT_HINT[result.verdict] }),
    ...(parts.upstreamResult?.structuredContent === undefined
      ? {}
      : { result: parts.upstreamResult.structuredContent }),
    ...(parts.output === undefined ? {} : { result: parts.output }),
    ...parts.extra,
  };
  const what =
    result.verdict === GuardedVerdict.completed
      ? `${parts.actionType} ${result.duplicate ? 'had already run' : 'ran'} once (proposal ${result.proposal}${receipt === null ? '' : `, receipt ${receipt.id}`}).`
      : `${VERDICT_HINT[result.verdict]} (proposal ${result.proposal}${result.reasonCode === undefined ? '' : `, reason ${result.reasonCode}`}${parts.approvalUrl === undefined ? '' : `, approve at ${parts.approvalUrl}`})`;
  return reply(`${result.code}: ${what}`, structured, failed, parts.upstreamResult?.content ?? []);
}

/** The answer of a shadow-mode write. */
export function shadowReply(result: ShadowWriteResult, tool: string): CallToolResult {
  const recorded = result.verdict === 'recorded';
  const structured: Record<string, unknown> = {
    decision: 'shadow_write',
    code: result.code,
    proposal: result.proposal,
    tool,
    ...(result.wouldBe === undefined ? {} : { wouldBe: result.wouldBe }),
    ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode }),
    ...(result.issues === undefined ? {} : { issues: result.issues }),
  };
  const summary = recorded
    ? `${result.code}: shadow mode — checked and recorded, nothing was sent (a live call would be ${result.wouldBe ?? 'executed'}).`
    : `${result.code}: ${VERDICT_HINT[result.verdict]}`;
  return reply(summary, structured, !recorded);
}

/**
 * How the HTTP door answers a guarded call: the original response for a completed write (a
 * duplicate gets the same bytes), the upstream's own refusal, or a problem document with a code
 * for every other verdict (pending approval 202, blocked/denied 403, rejected 422, in progress
 * 409, unknown outcome 502/504).
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { GuardedVerdict } from './decision-vocabulary.js';
import type { GuardedCallResult } from './guarded-call.js';
import { returnableResponseHeader } from './header-policy.js';
import { problemResponse } from './http-problems.js';
import { parseRecordedResponse, type RecordedResponse } from './recorded-response.js';

/** Response headers the gateway adds to every guarded answer. */
export function guardedHeaders(result: GuardedCallResult): Record<string, string> {
  return {
    'x-sideguard-decision': 'guarded',
    'x-sideguard-proposal': result.proposal,
    'x-sideguard-outcome': result.outcome,
    ...(result.duplicate ? { 'x-sideguard-duplicate': 'true' } : {}),
  };
}

/** Statuses whose answers never carry a body. */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/**
 * The headers an upstream's answer reaches the agent with: credentials and hop-by-hop headers
 * removed, a repeated header's values joined, then the gateway's own headers (`extra`) on top.
 */
export function returnableHeaders(
  upstream: readonly (readonly [string, string])[],
  extra: Readonly<Record<string, string>>,
): Record<string, string> {
  // A plain object is the servers' fast path (no Headers instance per response).
  const headers: Record<string, string> = {};
  for (const [name, value] of upstream) {
    // Forwarded answers come straight from the upstream: credentials and hop-by-hop stay out.
    if (!returnableResponseHeader(name)) continue;
    const existing = headers[name];
    headers[name] = existing === undefined ? value : `${existing}, ${value}`;
  }
  return Object.assign(headers, extra);
}

/** A recorded response, sent again byte for byte (with the gateway's headers added). */
export function recordedResponse(
  recorded: RecordedResponse,
  extra: Readonly<Record<string, string>>,
  method = 'GET',
): Response {
  const headers = returnableHeaders(recorded.headers, extra);
  const empty = method === 'HEAD' || NULL_BODY_STATUSES.has(recorded.status);
  return new Response(empty ? null : recorded.body, { status: recorded.status, headers });
}

/** The gateway's own document for a write whose original response is not available. */
function resultDocument(result: GuardedCallResult): Response {
  const body: JsonValue = {
    object: 'sideguard.guarded_result',
    proposal: result.proposal,
    outcome: result.outcome,
    status: result.status,
    receipts: result.receipts.map((receipt) => ({ id: receipt.id, provider: receipt.provider })),
  };
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { 'content-type': 'application/json', ...guardedHeaders(result) },
  });
}

const recordedOf = (output: JsonValue | undefined): RecordedResponse | undefined =>
  output === undefined ? undefined : parseRecordedResponse(output);

/** How each verdict the gateway answers itself is told to the agent. */
interface ProblemSpec {
  readonly status: (result: GuardedCallResult) => number;
  readonly detail: (result: GuardedCallResult) => string;
  readonly hint: string;
  readonly retryAfterSeconds?: number;
}

const PROBLEMS: Readonly<
  Record<Exclude<GuardedVerdict, 'completed' | 'upstream_refused'>, ProblemSpec>
> = {
  pending_approval: {
    status: () => 202,
    detail: () => 'The write waits for approval; nothing was sent.',
    hint: 'Retry the same request once it is approved: it then executes once. Until then it answers 202.',
    retryAfterSeconds: 30,
  },
  blocked: {
    status: () => 403,
    detail: (result) => `The action's policy blocks this write (${result.reasonCode}).`,
    hint: 'Change the request so that the policy allows it, or ask an operator; retrying it unchanged will not help.',
  },
  denied: {
    status: () => 403,
    detail: () => 'An approver rejected this write.',
    hint: 'Do not retry it unchanged; a new request with other protected fields is a new proposal.',
  },
  rejected: {
    status: () => 422,
    detail: () => "The request does not satisfy the action's contract.",
    hint: 'Fix the fields named in issues and send it again.',
  },
  in_progress: {
    status: () => 409,
    detail: () => 'The same write is being executed right now.',
    hint: 'Retry the same request shortly; it will get the original response and is never sent twice.',
    retryAfterSeconds: 1,
  },
  outcome_unknown: {
    status: (result) => (result.reasonCode === 'upstream_timeout' ? 504 : 502),
    detail: () =>
      'The upstream did not answer in time or lost the response; the write may have happened.',
    hint: 'Retry the same request later: the gateway verifies with the upstream and never sends it blindly again.',
    retryAfterSeconds: 2,
  },
  needs_attention: {
    status: () => 502,
    detail: () => 'Part of the write happened; an operator must settle it.',
    hint: 'Do not retry; the proposal is recorded with its receipts for an operator.',
  },
  not_executable: {
    status: () => 409,
    detail: (result) => `The proposal can no longer run (${result.status ?? result.outcome}).`,
    hint: 'Send the request again to make a new proposal.',
  },
};

/** The answer to a guarded call. */
export function guardedAnswer(
  result: GuardedCallResult,
  options: { readonly consoleUrl: string | undefined; readonly method: string },
): Response {
  const headers = guardedHeaders(result);
  const base = { decision: 'guarded', proposal: result.proposal, headers } as const;
  if (result.verdict === 'completed') {
    const recorded = recordedOf(result.output);
    return recorded === undefined
      ? resultDocument(result)
      : recordedResponse(recorded, headers, options.method);
  }
  if (result.verdict === 'upstream_refused') return refusedAnswer(result, base);
  const spec = PROBLEMS[result.verdict];
  const approvalUrl =
    result.verdict === 'pending_approval' && options.consoleUrl !== undefined
      ? `${options.consoleUrl.replace(/\/+$/, '')}/proposals/${result.proposal}`
      : undefined;
  return problemResponse(spec.status(result), result.code, spec.detail(result), {
    ...base,
    ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode }),
    ...(approvalUrl === undefined ? {} : { approvalUrl }),
    ...(result.verdict === 'rejected'
      ? { issues: (result.issues ?? []).map((issue) => ({ ...issue })) }
      : {}),
    hint: spec.hint,
    ...(spec.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: spec.retryAfterSeconds }),
  });
}

function refusedAnswer(
  result: GuardedCallResult,
  base: { decision: string; proposal: string; headers: Record<string, string> },
): Response {
  const recorded = recordedOf(result.output);
  if (recorded !== undefined) return recordedResponse(recorded, base.headers);
  if (result.reasonCode === 'binding_request_failed') {
    return problemResponse(
      500,
      'binding_request_failed',
      "The gateway's binding could not build the upstream request.",
      {
        ...base,
        hint: 'This is a gateway configuration error; report it to the operator. Nothing was sent.',
      },
    );
  }
  return problemResponse(
    502,
    'upstream_unreachable',
    'The upstream refused the connection; nothing was sent.',
    {
      ...base,
      hint: 'Retry later.',
      retryAfterSeconds: 2,
    },
  );
}

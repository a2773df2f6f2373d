/**
 * How the HTTP door answers a guarded call: the original response for a completed write (a
 * duplicate gets the same bytes), the upstream's own refusal, or a problem document with a code
 * for every other verdict (pending approval 202, blocked/denied 403, rejected 422, in progress
 * 409, unknown outcome 502/504).
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { GuardedCallResult } from './guarded-call.js';
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

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A recorded response, sent again byte for byte (with the gateway's headers added). */
export function recordedResponse(
  recorded: RecordedResponse,
  extra: Readonly<Record<string, string>>,
  method = 'GET',
): Response {
  const headers = new Headers();
  for (const [name, value] of recorded.headers) headers.append(name, value);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  const empty = method === 'HEAD' || NULL_BODY.has(recorded.status);
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

/** The answer to a guarded call. */
export function guardedAnswer(
  result: GuardedCallResult,
  options: { readonly consoleUrl: string | undefined; readonly method: string },
): Response {
  const headers = guardedHeaders(result);
  const base = { decision: 'guarded', proposal: result.proposal, headers } as const;
  const reasonCode = result.reasonCode;
  switch (result.verdict) {
    case 'completed': {
      const recorded = recordedOf(result.output);
      return recorded === undefined
        ? resultDocument(result)
        : recordedResponse(recorded, headers, options.method);
    }
    case 'pending_approval':
      return problemResponse(202, result.code, 'The write waits for approval; nothing was sent.', {
        ...base,
        ...(reasonCode === undefined ? {} : { reasonCode }),
        ...(options.consoleUrl === undefined
          ? {}
          : {
              approvalUrl: `${options.consoleUrl.replace(/\/+$/, '')}/proposals/${result.proposal}`,
            }),
        hint: 'Retry the same request once it is approved: it then executes once. Until then it answers 202.',
        retryAfterSeconds: 30,
      });
    case 'blocked':
      return problemResponse(
        403,
        result.code,
        `The action's policy blocks this write (${reasonCode}).`,
        {
          ...base,
          ...(reasonCode === undefined ? {} : { reasonCode }),
          hint: 'Change the request so that the policy allows it, or ask an operator; retrying it unchanged will not help.',
        },
      );
    case 'denied':
      return problemResponse(403, result.code, 'An approver rejected this write.', {
        ...base,
        hint: 'Do not retry it unchanged; a new request with other protected fields is a new proposal.',
      });
    case 'rejected':
      return problemResponse(
        422,
        result.code,
        "The request does not satisfy the action's contract.",
        {
          ...base,
          ...(reasonCode === undefined ? {} : { reasonCode }),
          issues: (result.issues ?? []).map((issue) => ({ ...issue })),
          hint: 'Fix the fields named in issues and send it again.',
        },
      );
    case 'in_progress':
      return problemResponse(409, result.code, 'The same write is being executed right now.', {
        ...base,
        hint: 'Retry the same request shortly; it will get the original response and is never sent twice.',
        retryAfterSeconds: 1,
      });
    case 'upstream_refused':
      return refusedAnswer(result, base);
    case 'outcome_unknown':
      return problemResponse(
        reasonCode === 'upstream_timeout' ? 504 : 502,
        result.code,
        'The upstream did not answer in time or lost the response; the write may have happened.',
        {
          ...base,
          ...(reasonCode === undefined ? {} : { reasonCode }),
          hint: 'Retry the same request later: the gateway verifies with the upstream and never sends it blindly again.',
          retryAfterSeconds: 2,
        },
      );
    case 'needs_attention':
      return problemResponse(
        502,
        result.code,
        'Part of the write happened; an operator must settle it.',
        {
          ...base,
          ...(reasonCode === undefined ? {} : { reasonCode }),
          hint: 'Do not retry; the proposal is recorded with its receipts for an operator.',
        },
      );
    case 'not_executable':
      return problemResponse(
        409,
        result.code,
        `The proposal can no longer run (${result.status ?? result.outcome}).`,
        {
          ...base,
          ...(reasonCode === undefined ? {} : { reasonCode }),
          hint: 'Send the request again to make a new proposal.',
        },
      );
  }
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

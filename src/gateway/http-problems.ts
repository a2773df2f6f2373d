/**
 * The HTTP door's wire errors: RFC 9457 problem documents (`application/problem+json`) with a
 * stable `code` an agent can branch on and a `hint` that says what to change, and the status of
 * each refusal. An agent's mistake is always a 4xx; 5xx means the upstream or the gateway failed.
 * Each document also carries `error: { type, code, message }`, the member provider clients such
 * as Stripe's look for, so an unchanged client raises its own error class.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { RefusalReason } from './decision-vocabulary.js';

/** The status of each refusal reason. */
export const REFUSAL_STATUS: Readonly<Record<RefusalReason, number>> = {
  agent_key_missing: 401,
  agent_key_invalid: 401,
  deny_rule: 403,
  binding_not_permitted: 403,
  write_not_bound: 403,
  tool_not_bound: 403,
  upstream_tool_changed: 403,
  upstream_unavailable: 503,
  route_not_declared: 404,
  replay_case_missing: 404,
};

/** Extra members of a problem document. */
export interface ProblemExtras {
  readonly hint?: string;
  readonly decision?: string;
  readonly proposal?: string;
  readonly reasonCode?: string;
  readonly approvalUrl?: string;
  readonly issues?: JsonValue;
  /** Sets `Retry-After`, in seconds. */
  readonly retryAfterSeconds?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

const title = (code: string): string => {
  const words = code.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A problem response. `detail` says what happened; `hint` what the agent can do. */
export function problemResponse(
  status: number,
  code: string,
  detail: string,
  extras: ProblemExtras = {},
): Response {
  const { headers, retryAfterSeconds, ...members } = extras;
  const body: Record<string, unknown> = {
    type: `urn:sideguard:problem:${code}`,
    title: title(code),
    status,
    code,
    detail,
  };
  for (const [name, value] of Object.entries(members)) if (value !== undefined) body[name] = value;
  // Clients that look for an `error` member (Stripe's among them) raise their own error class.
  body.error = {
    type: 'sideguard_error',
    code,
    message: detail,
    ...(members.hint === undefined ? {} : { hint: members.hint }),
    ...(members.proposal === undefined ? {} : { proposal: members.proposal }),
  };
  const responseHeaders: Record<string, string> = {
    'content-type': 'application/problem+json',
    ...headers,
  };
  if (retryAfterSeconds !== undefined) responseHeaders['retry-after'] = String(retryAfterSeconds);
  if (status === 401) responseHeaders['www-authenticate'] = 'Bearer realm="sideguard"';
  return new Response(JSON.stringify(body), { status, headers: responseHeaders });
}

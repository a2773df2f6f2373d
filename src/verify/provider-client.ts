/**
 * A minimal HTTP client for the verifier's actions: one request, one timeout, no retries of
 * its own (a hidden client retry is exactly what turns a lost response into a duplicate), and
 * a conservative map from what came back to "the write certainly did not happen" or "unknown".
 */

/** What one request produced. */
export type ProviderReply =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly body: unknown;
      readonly headers: Headers;
    }
  /** No (complete) response: refused, reset, closed with zero bytes, or timed out. */
  | { readonly kind: 'no_response'; readonly reason: 'timeout' | 'connection_lost' };

/** Options of one request. */
export interface ProviderRequestOptions {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT';
  readonly url: string;
  readonly headers?: Record<string, string>;
  /** A form-encoded (Stripe) or JSON body. */
  readonly body?: { readonly form: Record<string, string> } | { readonly json: unknown };
  /** @default 2_000 */
  readonly timeoutMs?: number;
}

/** Sends one request; never throws for network failures (they are `no_response`). */
export async function providerRequest(options: ProviderRequestOptions): Promise<ProviderReply> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined && 'form' in options.body) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.body.form).toString();
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body.json);
  }
  try {
    const response = await fetch(options.url, {
      method: options.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 2_000),
    });
    const text = await response.text();
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { unparsable: text.slice(0, 200) };
      }
    }
    return { kind: 'response', status: response.status, body: parsed, headers: response.headers };
  } catch (error) {
    const name = (error as { name?: string }).name;
    return {
      kind: 'no_response',
      reason: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'connection_lost',
    };
  }
}

/**
 * Whether a write's reply proves the provider did not apply it. Stripe-style semantics: 4xx
 * validation, auth and not-found errors and 429 are definite (nothing was executed); 409 (a
 * request with the same key is in flight), 5xx and no response are unknown.
 */
export function writeReplyVerdict(
  reply: ProviderReply,
): 'succeeded' | 'failed_known' | 'failed_unknown' {
  if (reply.kind === 'no_response') return 'failed_unknown';
  if (reply.status >= 200 && reply.status < 300) return 'succeeded';
  if (reply.status === 409 || reply.status >= 500) return 'failed_unknown';
  return 'failed_known';
}

/** A short reason code for a reply, for the ledger (never the body's free text). */
export function replyReason(reply: ProviderReply): string {
  if (reply.kind === 'no_response') {
    return reply.reason === 'timeout' ? 'provider_timeout' : 'response_lost';
  }
  const error = (reply.body as { error?: { code?: unknown; type?: unknown } } | null)?.error;
  const code =
    typeof error?.code === 'string'
      ? error.code
      : typeof error?.type === 'string'
        ? error.type
        : undefined;
  return code === undefined ? `http_${reply.status}` : `http_${reply.status}_${code}`.slice(0, 80);
}

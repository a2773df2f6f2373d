/**
 * How a webhook body is signed and how a receiver checks it: HMAC-SHA256 over
 * `"<timestamp>.<body>"` with the shared secret, sent as `Sideguard-Signature: t=<unix
 * seconds>,v1=<hex>`. The timestamp in the signed text lets a receiver refuse replays of an old
 * delivery (`toleranceSeconds`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the timestamp and signature. */
export const WEBHOOK_SIGNATURE_HEADER = 'sideguard-signature';

/** The shortest secret accepted, in characters. */
export const WEBHOOK_SECRET_MIN_LENGTH = 32;

/** The hex HMAC-SHA256 of `"<timestampSeconds>.<body>"`. */
export function webhookSignature(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex');
}

/** The `Sideguard-Signature` header value for a body sent at `timestampSeconds`. */
export function webhookSignatureHeader(
  secret: string,
  timestampSeconds: number,
  body: string,
): string {
  return `t=${timestampSeconds},v1=${webhookSignature(secret, timestampSeconds, body)}`;
}

/** Options of {@link verifyWebhookSignature}. */
export interface VerifyWebhookSignatureOptions {
  readonly secret: string;
  /** The `Sideguard-Signature` header as received. */
  readonly header: string | null | undefined;
  /** The raw request body, exactly as received (not re-serialised JSON). */
  readonly body: string;
  /** Now, in unix seconds. @default the wall clock */
  readonly nowSeconds?: number;
  /** How old (or how far ahead) a delivery may be. @default 300 */
  readonly toleranceSeconds?: number;
}

/** Why a delivery was refused, or that it is genuine. */
export type WebhookSignatureVerdict =
  | { readonly kind: 'valid'; readonly timestampSeconds: number }
  | { readonly kind: 'invalid'; readonly reason: 'missing' | 'malformed' | 'mismatch' | 'too_old' };

/** Checks a delivery: the signature matches the body and the timestamp is recent. */
export function verifyWebhookSignature(
  options: VerifyWebhookSignatureOptions,
): WebhookSignatureVerdict {
  if (options.header === null || options.header === undefined || options.header === '') {
    return { kind: 'invalid', reason: 'missing' };
  }
  const parts = new Map(
    options.header.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const timestamp = Number(parts.get('t'));
  const signature = parts.get('v1') ?? '';
  if (!Number.isSafeInteger(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) {
    return { kind: 'invalid', reason: 'malformed' };
  }
  const expected = Buffer.from(webhookSignature(options.secret, timestamp, options.body), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    return { kind: 'invalid', reason: 'mismatch' };
  }
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) {
    return { kind: 'invalid', reason: 'too_old' };
  }
  return { kind: 'valid', timestampSeconds: timestamp };
}

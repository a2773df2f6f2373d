/**
 * The `requestState` of a guarded call waiting for approval: an authenticated reference (HMAC
 * with the key ring's current key, domain-separated) that binds the proposal, the requesting
 * agent, principal and tenant, the tool, the keyed digest of the arguments and an expiry. The
 * client echoes it on retry; whatever comes back is attacker-controlled until `readRequestState`
 * says it is genuine, current and unchanged. Signed, not encrypted: it holds ids and digests only.
 */
import { timingSafeEqual } from 'node:crypto';
import { keyedDigest } from '../../core/commitment.js';
import { KeyPurpose, type KeyReference, type KeyRing } from '../../core/key-ring.js';

/** What a state binds. */
export interface RequestStateClaims {
  readonly proposal: string;
  readonly tenant: string;
  readonly agent: string;
  readonly principal: string;
  readonly tool: string;
  /** The keyed digest of the call's arguments (`McpGateway.digestArguments`). */
  readonly argumentsDigest: string;
  /** Epoch ms after which the state is refused. */
  readonly expiresAtMs: number;
}

/** Why a state was refused. */
export type RequestStateRefusal = 'malformed' | 'forged' | 'expired';

/** A checked state. */
export type RequestStateVerdict =
  | { readonly kind: 'valid'; readonly claims: RequestStateClaims }
  | { readonly kind: 'invalid'; readonly reason: RequestStateRefusal };

/** Where a client may put the state on a call that has no protocol field for it (2025 era). */
export const REQUEST_STATE_META_KEY = 'io.sideguard/requestState';

const DOMAIN = 'sideguard/gateway/mcp-request-state/v1';
const PREFIX = 'sgrs1';
const MAX_LENGTH = 4_096;
const TEXT_FIELDS = [
  'proposal',
  'tenant',
  'agent',
  'principal',
  'tool',
  'argumentsDigest',
] as const;

const macOf = (keyRing: KeyRing, key: KeyReference, claims: RequestStateClaims): string =>
  keyedDigest(keyRing, KeyPurpose.commitment, key, DOMAIN, { v: 1, ...claims });

/** Seals claims into the wire string, under the ring's current key. */
export function mintRequestState(keyRing: KeyRing, claims: RequestStateClaims): string {
  const key = keyRing.current;
  const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${PREFIX}.${key.handle}.${key.version}.${body}.${macOf(keyRing, key, claims)}`;
}

function claimsOf(value: unknown): RequestStateClaims | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (Object.keys(record).length !== TEXT_FIELDS.length + 1) return undefined;
  for (const field of TEXT_FIELDS) {
    if (typeof record[field] !== 'string' || record[field] === '') return undefined;
  }
  if (!Number.isSafeInteger(record.expiresAtMs)) return undefined;
  return record as unknown as RequestStateClaims;
}

/** Checks an echoed state: well formed, made with a key of this ring, unchanged, not expired. */
export function readRequestState(
  keyRing: KeyRing,
  state: unknown,
  nowMs: number,
): RequestStateVerdict {
  if (typeof state !== 'string' || state.length > MAX_LENGTH) {
    return { kind: 'invalid', reason: 'malformed' };
  }
  const [prefix, handle, version, body, mac, ...rest] = state.split('.');
  if (
    prefix !== PREFIX ||
    rest.length > 0 ||
    !handle ||
    !body ||
    !mac ||
    !/^\d{1,9}$/.test(version ?? '')
  ) {
    return { kind: 'invalid', reason: 'malformed' };
  }
  let claims: RequestStateClaims | undefined;
  try {
    claims = claimsOf(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    claims = undefined;
  }
  if (claims === undefined) return { kind: 'invalid', reason: 'malformed' };
  const key = { handle, version: Number(version) };
  // A key this ring never held cannot have made it: the same answer as a wrong MAC.
  if (!keyRing.has(key)) return { kind: 'invalid', reason: 'forged' };
  const expected = Buffer.from(macOf(keyRing, key, claims), 'utf8');
  const presented = Buffer.from(mac, 'utf8');
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) {
    return { kind: 'invalid', reason: 'forged' };
  }
  if (nowMs >= claims.expiresAtMs) return { kind: 'invalid', reason: 'expired' };
  return { kind: 'valid', claims };
}

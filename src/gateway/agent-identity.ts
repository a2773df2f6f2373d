/**
 * Agent API keys: kept only as SHA-256 digests, compared in constant time against every
 * configured agent (no early exit), read from `Authorization: Bearer` or Basic credentials.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { AgentIdentity } from './decide-call.js';
import type { CompiledAgent } from './gateway-table.js';

/** SHA-256 of an agent key, as 32 bytes. */
export function hashAgentKey(key: string): Uint8Array {
  // The one-shot form: no Hash object per request (Node ≥ 20.12).
  return hash('sha256', key, 'buffer');
}

/**
 * The key an agent presented: the Bearer token, or for Basic the password (or the user name when
 * the password is empty, as Stripe's clients send it). `undefined` when there is none.
 */
export function presentedKey(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const [scheme, value] = authorization.trim().split(/\s+/, 2);
  if (value === undefined || value === '') return undefined;
  if (scheme?.toLowerCase() === 'bearer') return value;
  if (scheme?.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded === '' ? undefined : decoded;
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const key = password === '' ? user : password;
  return key === '' ? undefined : key;
}

/** Who presented `key`: compares its digest with every agent's, always all of them. */
export function authenticateAgent(
  agents: readonly CompiledAgent[],
  key: string | undefined,
): AgentIdentity {
  if (key === undefined) return { kind: 'missing' };
  const digest = hashAgentKey(key);
  let found: CompiledAgent | undefined;
  for (const agent of agents) {
    if (timingSafeEqual(agent.keySha256, digest) && found === undefined) found = agent;
  }
  return found === undefined ? { kind: 'invalid' } : { kind: 'agent', agent: found };
}

/**
 * Who may call the data plane: requests carrying the sandbox's reserved headers are refused, and
 * a provider API key must map to a role that may call the operation (the provider's own 401/403).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { RequestDecision } from './observations.js';
import type { SandboxRuntime } from './sandbox-runtime.js';
import type { ProviderDefinition, ProviderResponse } from './sandbox-types.js';

/** Prefix of headers only the sandbox may use; a data-plane request carrying one gets 400. */
export const reservedHeaderPrefix = 'x-sideguard-';

/** The first reserved (`x-sideguard-*`) header a request carries, or `undefined`. */
export function reservedHeaderIn(headers: IncomingHttpHeaders): string | undefined {
  return Object.keys(headers).find((name) => name.startsWith(reservedHeaderPrefix));
}

/** The identity decision for one request. */
export type IdentityCheck =
  | {
      readonly kind: 'allowed';
      readonly role: string;
      /** The API key as sent (idempotency keys are scoped to it). */
      readonly credential: string | undefined;
    }
  | {
      readonly kind: 'rejected';
      readonly response: ProviderResponse;
      readonly decision: RequestDecision;
      /** The role of a known key that lacks the operation, else `null`. */
      readonly role: string | null;
    };

/** Checks the request's API key against the key table for `operation` of `provider`. */
export function checkIdentity(
  runtime: SandboxRuntime,
  provider: ProviderDefinition,
  operation: string,
  headers: IncomingHttpHeaders,
): IdentityCheck {
  const credential = provider.credential(headers);
  const identity = runtime.config.keys.decide(provider.name, credential, operation);
  if (identity.kind === 'allowed') return { kind: 'allowed', role: identity.role, credential };
  const decision =
    identity.kind === 'missing'
      ? RequestDecision.unauthenticated
      : identity.kind === 'unknown'
        ? RequestDecision.unknownKey
        : RequestDecision.forbidden;
  return {
    kind: 'rejected',
    response: provider.errors.auth(identity.kind, {
      operation,
      ...(credential === undefined ? {} : { credentialHint: credential }),
    }),
    decision,
    role: identity.kind === 'forbidden' ? identity.role : null,
  };
}

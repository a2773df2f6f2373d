/**
 * Provider API keys → roles. Keys are kept only as SHA-256 hashes; a role names the operations
 * it may call, as each provider declares them.
 */
import { createHash } from 'node:crypto';
import { SandboxConfigError } from './sandbox-errors.js';
import type { ProviderDefinition } from './sandbox-types.js';

/** One API key the sandbox accepts: plain (hashed at start) or already hashed. */
export type SandboxApiKey =
  | { readonly provider: string; readonly role: string; readonly key: string }
  | { readonly provider: string; readonly role: string; readonly keySha256: string };

/** The outcome of checking a request's credential. */
export type IdentityDecision =
  | { readonly kind: 'allowed'; readonly role: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'forbidden'; readonly role: string };

/** SHA-256 of a key, hex: the only form in which the sandbox keeps keys. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The key table of one sandbox. */
export class KeyTable {
  private readonly roles = new Map<string, string>();

  constructor(
    keys: readonly SandboxApiKey[],
    private readonly providers: ReadonlyMap<string, ProviderDefinition>,
  ) {
    for (const entry of keys) {
      const provider = providers.get(entry.provider);
      if (provider === undefined) {
        throw new SandboxConfigError(
          'sandbox_key_invalid',
          `Invalid API key entry: provider ${JSON.stringify(entry.provider)} is not enabled`,
        );
      }
      if (provider.roles[entry.role] === undefined) {
        throw new SandboxConfigError(
          'sandbox_key_invalid',
          `Invalid API key entry: provider ${entry.provider} has no role ${JSON.stringify(entry.role)} (roles: ${Object.keys(provider.roles).join(', ')})`,
        );
      }
      const hash = 'key' in entry ? hashApiKey(entry.key) : entry.keySha256.toLowerCase();
      this.roles.set(`${entry.provider}:${hash}`, entry.role);
    }
  }

  /** Decides whether `credential` may call `operation` of `provider`. */
  decide(provider: string, credential: string | undefined, operation: string): IdentityDecision {
    if (credential === undefined || credential.length === 0) return { kind: 'missing' };
    const role = this.roles.get(`${provider}:${hashApiKey(credential)}`);
    if (role === undefined) return { kind: 'unknown' };
    const allowed = this.providers.get(provider)?.roles[role] ?? [];
    return allowed.includes(operation) ? { kind: 'allowed', role } : { kind: 'forbidden', role };
  }
}

/**
 * Ledger anchors: a tenant's chain head, written down outside the store, so an auditor can later
 * prove that the chain up to it was not rewritten by someone who can write to the store (who
 * could otherwise rehash the whole chain; decision 045).
 */
import { checkTenant } from './argument-checks.js';
import { StoreInvariantError } from './errors.js';
import type { GuardStore } from './store.js';

/** A tenant's chain head as an auditor records it (`sideguard ledger head` prints this). */
export interface LedgerAnchor {
  readonly tenant: string;
  /** The sequence of the chain's last event. */
  readonly sequence: number;
  /** That event's hash (64 hex digits): `ledger verify --expect-head TENANT@SEQUENCE:HASH`. */
  readonly hash: string;
  /** That event's time (ISO-8601, the guard's clock), or null when retention removed it. */
  readonly at: string | null;
}

/**
 * The tenant's current chain head, or undefined when the tenant has no ledger in this store.
 * Reads the head the store keeps and the event it names (two reads).
 * @throws ContractViolationError for a tenant name the guard would refuse;
 *   StoreInvariantError `ledger_head_mismatch` when the head names an event the chain does not hold.
 */
export async function readLedgerAnchor(
  store: GuardStore,
  tenant: string,
): Promise<LedgerAnchor | undefined> {
  const name = checkTenant(tenant);
  const head = await store.ledgerHead(name);
  if (head === undefined) return undefined;
  const [event] = await store.readLedger({
    tenant: name,
    afterSequence: head.sequence - 1,
    limit: 1,
  });
  if (event === undefined) {
    const checkpoint = await store.ledgerCheckpoint(name);
    if (checkpoint?.sequence === head.sequence && checkpoint.hash === head.hash) {
      return { tenant: name, sequence: head.sequence, hash: head.hash, at: null };
    }
  }
  if (event?.sequence !== head.sequence || event.hash !== head.hash) {
    throw new StoreInvariantError(
      'ledger_head_mismatch',
      `The ${store.kind} store's ledger head for tenant ${JSON.stringify(name)} is sequence ${head.sequence}, but its chain holds no such event with that hash; the store was altered outside Sideguard or is damaged. Verify the exported ledger against an anchored head.`,
      { data: { tenant: name, sequence: head.sequence } },
    );
  }
  return { tenant: name, sequence: head.sequence, hash: head.hash, at: event.at };
}

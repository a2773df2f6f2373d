/** The guard's view of a tenant's ledger: export, chain verification against the store's head, replay. */
import {
  type LedgerVerification,
  ledgerToJsonl,
  type ProposalReplay,
  replayProposal,
  verifyLedgerChain,
} from '../ledger.js';
import { checkArgument, type GuardContext } from './guard-context.js';
import type { ProposalAddress } from './guard-types.js';

/** The tenant's ledger as JSONL (one sealed event per line). */
export async function exportLedger(
  context: GuardContext,
  options: { readonly tenant: string },
): Promise<string> {
  const tenant = checkArgument('tenant', options.tenant);
  return ledgerToJsonl(await context.store.readLedger({ tenant }));
}

/** Verifies the tenant's stored chain (from its retention checkpoint, if any) and its end. */
export async function verifyLedger(
  context: GuardContext,
  options: { readonly tenant: string },
): Promise<LedgerVerification> {
  const tenant = checkArgument('tenant', options.tenant);
  const { store } = context;
  const checkpoint = await store.ledgerCheckpoint(tenant);
  const verdict = verifyLedgerChain(
    await store.readLedger({ tenant }),
    checkpoint === undefined ? {} : { from: checkpoint },
  );
  if (verdict.kind === 'invalid') return verdict;
  // The chain can only prove what it holds: compare its end with the head the store kept,
  // so removing the newest entries is detected too.
  const head = await store.ledgerHead(tenant);
  if (head?.sequence !== verdict.head?.sequence || head?.hash !== verdict.head?.hash) {
    return {
      kind: 'invalid',
      index: verdict.count,
      sequence: verdict.head?.sequence ?? null,
      reason: 'head_mismatch',
      message: `the chain ends at sequence ${verdict.head?.sequence ?? 0} but the store's head is sequence ${head?.sequence ?? 0} (entries were removed from the end)`,
    };
  }
  return verdict;
}

/** A proposal's decision path reconstructed from the ledger alone. */
export async function replayFromLedger(
  context: GuardContext,
  address: ProposalAddress,
): Promise<ProposalReplay | undefined> {
  const tenant = checkArgument('tenant', address.tenant);
  const proposal = checkArgument('proposal', address.proposal);
  return replayProposal(await context.store.readLedger({ tenant, proposal }), proposal);
}

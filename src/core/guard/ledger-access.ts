/** The guard's view of a tenant's ledger: export, chain verification against the store's head, replay. */
import { checkArgument, checkTenant } from '../argument-checks.js';
import {
  createLedgerChainVerifier,
  type LedgerEvent,
  type LedgerHead,
  type LedgerVerification,
  ledgerToJsonl,
  type ProposalReplay,
  replayProposal,
} from '../ledger.js';
import type { GuardStore } from '../store.js';
import type { GuardContext } from './guard-context.js';
import type { ProposalAddress } from './guard-types.js';

/** What exporting a ledger reads from a store. */
export type LedgerReader = Pick<GuardStore, 'ledgerHead' | 'readLedger'>;

/** Events per store read when exporting or verifying: memory stays bounded by one page. */
const LEDGER_PAGE = 1000;

/**
 * The tenant's ledger as JSONL chunks (one sealed event per line, one chunk per page of events),
 * read page by page, up to the head the store holds when the export starts: memory stays constant
 * however long the chain is.
 */
export async function* exportLedgerChunks(
  context: { readonly store: LedgerReader },
  options: { readonly tenant: string },
): AsyncGenerator<string, void, undefined> {
  const tenant = checkTenant(options.tenant);
  const head = await context.store.ledgerHead(tenant);
  for await (const page of ledgerPages(context.store, tenant, 0)) {
    const kept =
      head === undefined ? page : page.filter((event) => event.sequence <= head.sequence);
    if (kept.length > 0) yield ledgerToJsonl(kept);
    if (kept.length < page.length) return;
  }
}

/** The tenant's ledger as one JSONL string (see {@link exportLedgerChunks} for long chains). */
export async function exportLedger(
  context: GuardContext,
  options: { readonly tenant: string },
): Promise<string> {
  let text = '';
  for await (const chunk of exportLedgerChunks(context, options)) text += chunk;
  return text;
}

/**
 * Verifies the tenant's stored chain (from its retention checkpoint, if any) and its end, page by
 * page. The end must be the head the store keeps, so removing the newest entries is detected, and
 * so is an entry added after the head; entries appended while it reads are read too.
 */
export async function verifyLedger(
  context: GuardContext,
  options: { readonly tenant: string },
): Promise<LedgerVerification> {
  const tenant = checkTenant(options.tenant);
  const { store } = context;
  const checkpoint = await store.ledgerCheckpoint(tenant);
  const verifier = createLedgerChainVerifier(checkpoint === undefined ? {} : { from: checkpoint });
  let after = 0;
  // Each round reads what was appended since the last; a head that stays ahead of a chain that
  // no longer grows means entries were removed from the end.
  for (let round = 0; round < MAX_VERIFY_ROUNDS; round += 1) {
    let grew = false;
    for await (const page of ledgerPages(store, tenant, after)) {
      grew = true;
      for (const event of page) {
        if (verifier.push(event) !== undefined) return verifier.result();
      }
      after = (page.at(-1) as LedgerEvent).sequence;
    }
    const verdict = verifier.result();
    if (verdict.kind === 'invalid') return verdict;
    const head = await store.ledgerHead(tenant);
    if (head?.sequence === verdict.head?.sequence && head?.hash === verdict.head?.hash) {
      return verdict;
    }
    if (!grew && round > 0) return headMismatch(verdict, head);
    if ((head?.sequence ?? 0) < (verdict.head?.sequence ?? 0)) return headMismatch(verdict, head);
  }
  const last = verifier.result();
  return last.kind === 'invalid' ? last : headMismatch(last, await store.ledgerHead(tenant));
}

/** A busy tenant gets this many chances to catch up with its head before the check gives up. */
const MAX_VERIFY_ROUNDS = 8;

function headMismatch(
  verdict: Extract<LedgerVerification, { kind: 'valid' }>,
  head: LedgerHead | undefined,
): LedgerVerification {
  const end = verdict.head;
  const ends = end?.sequence ?? 0;
  const headAt = head?.sequence ?? 0;
  const why =
    headAt < ends
      ? 'entries were added after the head'
      : headAt === ends
        ? 'its last entry is not the one the head names'
        : 'entries were removed from the end';
  return {
    kind: 'invalid',
    index: verdict.count,
    sequence: end?.sequence ?? null,
    reason: 'head_mismatch',
    message: `the chain ends at sequence ${ends} but the store's head is sequence ${headAt} (${why})`,
  };
}

/** The tenant's events after `after`, a page at a time, in sequence order. */
async function* ledgerPages(
  store: LedgerReader,
  tenant: string,
  after: number,
): AsyncGenerator<readonly LedgerEvent[], void, undefined> {
  let from = after;
  for (;;) {
    const page = await store.readLedger({
      tenant,
      afterSequence: from,
      limit: LEDGER_PAGE,
    });
    if (page.length === 0) return;
    yield page;
    if (page.length < LEDGER_PAGE) return;
    from = (page.at(-1) as LedgerEvent).sequence;
  }
}

/** A proposal's decision path reconstructed from the ledger alone. */
export async function replayFromLedger(
  context: GuardContext,
  address: ProposalAddress,
): Promise<ProposalReplay | undefined> {
  const tenant = checkTenant(address.tenant);
  const proposal = checkArgument('proposal', address.proposal);
  return replayProposal(await context.store.readLedger({ tenant, proposal }), proposal);
}

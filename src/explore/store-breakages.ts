/**
 * Store-level breakages for keeping the explorer honest (test-only): wrappers that break one
 * promise of a real store on purpose. Each must be caught by an invariant within 60 s.
 */
import type { GuardStore, StoreCommit, StoreCommitResult } from '../core/store.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import type { ExplorerBreakage, ProcessName } from './explore-vocabulary.js';
import type { Scheduler } from './scheduler.js';
import type { StoreLog } from './store-probe.js';

/** The store never records or enforces the semantic-effect claim. */
function claimsNeverBlock(inner: GuardStore): GuardStore {
  return {
    ...bind(inner),
    commit: ({ claim: _ignored, ...write }: StoreCommit) => inner.commit(write),
  };
}

/** A conflicting compare-and-set is re-applied over whatever revision is stored. */
function casIgnoresRevision(inner: GuardStore): GuardStore {
  return {
    ...bind(inner),
    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      const result = await inner.commit(write);
      const change = write.proposal;
      if (result.kind !== 'revision_conflict' || change?.kind !== 'update') return result;
      const current = result.current;
      if (current === undefined) return result;
      try {
        return await inner.commit({
          ...write,
          proposal: {
            kind: 'update',
            expectedRevision: current.revision,
            expectedStatus: current.status,
            record: { ...change.record, revision: current.revision + 1 },
          },
        });
      } catch {
        return result; // the stored status cannot move there at all
      }
    },
  };
}

/**
 * Status and ledger live in two stores and commit apart: the status change is acknowledged
 * first; its ledger events are appended at a later scheduling point (lost if the process
 * crashes in between). Memory tier only.
 */
function ledgerApartFromStatus(
  scheduler: Scheduler,
  log: StoreLog,
): (process: ProcessName) => GuardStore {
  const status = createMemoryStore();
  const ledger = createMemoryStore();
  return (process) => ({
    kind: 'memory',
    // Inserts reach the status store, which refuses a listed effect in its own commit.
    refusesListedEffects: status.refusesListedEffects === true,
    async commit(write) {
      if (write.proposal === undefined) return ledger.commit(write);
      const result = await status.commit(write);
      if (result.kind !== 'committed') return result;
      scheduler.task(
        'ledger append (apart from its status)',
        'record',
        () => {
          const step = scheduler.step;
          void ledger.commit({ tenant: write.tenant, events: write.events }).then((appended) => {
            if (appended.kind === 'committed') log.durableLate(appended.events, step);
          });
        },
        process,
      );
      return { kind: 'committed', events: [] };
    },
    getProposal: (tenant, proposal) => status.getProposal(tenant, proposal),
    listProposalsByEffect: (tenant, scope, limit) =>
      status.listProposalsByEffect(tenant, scope, limit),
    getEffectClaim: (tenant, scope) => status.getEffectClaim(tenant, scope),
    listEvidence: (tenant, proposal) => status.listEvidence(tenant, proposal),
    listDue: (query) => status.listDue(query),
    listProposals: (query) => status.listProposals(query),
    readLedger: (query) => ledger.readLedger(query),
    ledgerHead: (tenant) => ledger.ledgerHead(tenant),
    truncateLedger: (tenant, through) => ledger.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => ledger.ledgerCheckpoint(tenant),
    close: async () => {
      await status.close();
      await ledger.close();
    },
  });
}

/** The store's members bound to it (so a wrapper can override one). */
function bind(inner: GuardStore): GuardStore {
  return {
    kind: inner.kind,
    refusesListedEffects: inner.refusesListedEffects === true,
    commit: (write) => inner.commit(write),
    getProposal: (tenant, proposal) => inner.getProposal(tenant, proposal),
    listProposalsByEffect: (tenant, scope, limit) =>
      inner.listProposalsByEffect(tenant, scope, limit),
    getEffectClaim: (tenant, scope) => inner.getEffectClaim(tenant, scope),
    listEvidence: (tenant, proposal) => inner.listEvidence(tenant, proposal),
    listDue: (query) => inner.listDue(query),
    listProposals: (query) => inner.listProposals(query),
    readLedger: (query) => inner.readLedger(query),
    ledgerHead: (tenant) => inner.ledgerHead(tenant),
    truncateLedger: (tenant, through) => inner.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => inner.ledgerCheckpoint(tenant),
    close: () => inner.close(),
  };
}

/**
 * Builds the per-process store of a schedule: the real `base` store (or, for the
 * `ledger_apart_from_status` breakage, a split pair), with the selected breakages wrapped on.
 * Returns the store each process sees and the store the judge reads the durable state from.
 */
export function applyStoreBreakages(
  base: GuardStore,
  breakages: ReadonlySet<string>,
  scheduler: Scheduler,
  log: StoreLog,
): { readonly forProcess: (process: ProcessName) => GuardStore; readonly durable: GuardStore } {
  const has = (breakage: ExplorerBreakage) => breakages.has(breakage);
  let forProcess: (process: ProcessName) => GuardStore = () => base;
  let durable = base;
  if (has('ledger_apart_from_status')) {
    const split = ledgerApartFromStatus(scheduler, log);
    const shared = split('app');
    forProcess = split;
    durable = shared;
  }
  const wrap = (store: GuardStore): GuardStore => {
    let wrapped = store;
    if (has('claims_never_block')) wrapped = claimsNeverBlock(wrapped);
    if (has('cas_ignores_revision')) wrapped = casIgnoresRevision(wrapped);
    return wrapped;
  };
  return { forProcess: (process) => wrap(forProcess(process)), durable };
}

/**
 * Store wrappers for gate tests: each wraps only the store the guard sees, while the verifier
 * reads the evidence from the real store. Guarantees are broken with the core's own switch
 * (`createGuardCore({ breakages })`); these set the stage for it. Test-only.
 */
import type { GuardStore } from '../../src/core/store.js';

/**
 * Not a breakage: the race the effect claim exists for, made certain. Every `prepare` misses the
 * proposals already made for its effect, as if all of them had run at the same instant, so each
 * creates its own proposal and only the claim at execution stands between them.
 */
export function preparesMissEachOther(store: GuardStore): GuardStore {
  return wrap(store, { listProposalsByEffect: async () => [] });
}

function wrap(store: GuardStore, overrides: Partial<GuardStore>): GuardStore {
  return {
    kind: store.kind,
    commit: (write) => store.commit(write),
    getProposal: (tenant, proposal) => store.getProposal(tenant, proposal),
    listProposalsByEffect: (tenant, scope, limit) =>
      store.listProposalsByEffect(tenant, scope, limit),
    getEffectClaim: (tenant, scope) => store.getEffectClaim(tenant, scope),
    listEvidence: (tenant, proposal) => store.listEvidence(tenant, proposal),
    listDue: (query) => store.listDue(query),
    listProposals: (query) => store.listProposals(query),
    readLedger: (query) => store.readLedger(query),
    ledgerHead: (tenant) => store.ledgerHead(tenant),
    truncateLedger: (tenant, through) => store.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => store.ledgerCheckpoint(tenant),
    close: () => store.close(),
    ...overrides,
  };
}

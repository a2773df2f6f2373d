/**
 * Store-level stand-ins for breaking a guarantee of the guard on purpose, until the core's own
 * breakage switch (`createGuardCore({ breakages })`) is available. Each wraps only the store the
 * guard sees; the verifier reads the evidence from the real store. Test-only.
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

/** The effect claim never blocks: every claim is taken under a scope of its own. */
export function claimsNeverBlock(store: GuardStore): GuardStore {
  let counter = 0;
  return wrap(store, {
    commit: (write) =>
      store.commit(
        write.claim === undefined
          ? write
          : {
              ...write,
              claim: { ...write.claim, effectScope: `${write.claim.effectScope}#${++counter}` },
            },
      ),
  });
}

/** The approval tally counts expired approvals: the guard sees every approval as unexpired. */
export function tallyCountsExpired(store: GuardStore): GuardStore {
  return wrap(store, {
    listEvidence: async (tenant, proposal) =>
      (await store.listEvidence(tenant, proposal)).map((record) => ({
        ...record,
        expiresAtMs: Number.MAX_SAFE_INTEGER,
      })),
  });
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
    readLedger: (query) => store.readLedger(query),
    ledgerHead: (tenant) => store.ledgerHead(tenant),
    truncateLedger: (tenant, through) => store.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => store.ledgerCheckpoint(tenant),
    close: () => store.close(),
    ...overrides,
  };
}

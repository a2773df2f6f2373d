// A five-minute tour of the guard: define a refund action that needs 2-of-3 approval, approve
// it, execute it twice, and see one effect and the ledger that proves it.
// Run with: npm run demo   (after npm install, which builds the package)

import {
  approvals,
  buildAuthorityEvidence,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from 'sideguard';
import { z } from 'zod';

// A stand-in payment provider that counts the refunds it really issued.
const provider = { refunds: new Map(), calls: 0 };

const refund = defineAction({
  type: { namespace: 'support', name: 'refund', version: 1 },
  input: z.object({
    orderId: z.string(),
    amount: z.string(), // money travels as a decimal string
    currency: z.string(),
    customerId: z.string(),
    reason: z.string(),
    requestId: z.string().optional(), // retry metadata: not part of the effect
  }),
  // These fields ARE the effect: a retry with a new requestId is the same refund.
  protectedFields: ['orderId', 'amount', 'currency', 'customerId'],
  policy: (input) =>
    Number(input.amount) <= 100
      ? { decision: 'allow', reason: 'within_auto_limit' }
      : { decision: 'require_approval', reason: 'over_auto_limit' },
  approval: approvals.mOfN(2, ['finance-ana', 'finance-ben', 'finance-cai']),
  preview: (input) => `Refund ${input.amount} ${input.currency} on order ${input.orderId}`,
  // The guard hands you an idempotency key derived from the effect: pass it to the provider.
  execute: async (_input, { providerIdempotencyKey }) => {
    provider.calls += 1;
    if (!provider.refunds.has(providerIdempotencyKey)) {
      provider.refunds.set(providerIdempotencyKey, `re_${provider.refunds.size + 1}`);
    }
    return {
      kind: 'accepted',
      receipt: { id: provider.refunds.get(providerIdempotencyKey), provider: 'payments' },
    };
  },
  // After an unknown outcome the guard asks the provider instead of resending blindly.
  verify: async (_input, { providerIdempotencyKey }) => {
    const id = provider.refunds.get(providerIdempotencyKey);
    return id
      ? { kind: 'present', receipt: { id, provider: 'payments' } }
      : { kind: 'absent', final: true };
  },
});

const guard = createGuard({
  store: createMemoryStore(), // sideguard/sqlite and sideguard/postgres persist
  keyRing: createDevelopmentKeyRing(), // development keys: never in production
});

const tenant = 'acme';
const input = {
  orderId: 'ord_1001',
  amount: '250.00',
  currency: 'EUR',
  customerId: 'cus_ada',
  reason: 'damaged item',
  requestId: 'req-1',
};

// 1. The agent proposes. Over 100.00, the policy requires approval.
const proposed = await guard.prepare(refund, { tenant, input, principal: 'support-agent' });
console.log(`1. proposed ${proposed.proposal}: ${proposed.outcome} (${proposed.reasonCode})`);

// 2. Two of the three finance approvers approve exactly what was proposed.
const view = await guard.read(refund, {
  tenant,
  proposal: proposed.proposal,
  reader: 'finance-ana',
});
console.log(`2. approvers see: "${view.preview}"`);
for (const authority of ['finance-ana', 'finance-ben']) {
  const evidence = buildAuthorityEvidence(view.evidenceBindings, {
    authority,
    decision: 'approve',
    channelAssurance: 'medium',
    issuedAt: Date.now(),
  });
  const recorded = await guard.recordAuthority(refund, {
    tenant,
    evidence,
    authenticatedAuthority: authority, // who your login/session says this is
  });
  console.log(`   ${authority} approved -> ${recorded.outcome}`);
}

// 3. Execute twice, concurrently (a retry racing the first attempt) and once more later.
const [a, b] = await Promise.all([
  guard.execute(refund, { tenant, proposal: proposed.proposal }),
  guard.execute(refund, { tenant, proposal: proposed.proposal }),
]);
const later = await guard.execute(refund, { tenant, proposal: proposed.proposal });
console.log(`3. executes -> ${a.outcome}, ${b.outcome}, then ${later.outcome}`);

// 4. The agent "retries" with a new request id: same effect, so it is replayed, not re-run.
const retry = await guard.run(refund, {
  tenant,
  input: { ...input, requestId: 'req-2' },
  principal: 'support-agent',
});
console.log(`4. agent retry -> ${retry.outcome} (points at ${retry.proposal})`);
console.log(`   provider calls: ${provider.calls}, refunds issued: ${provider.refunds.size}`);

// 5. The evidence: a hash-chained ledger that replays into the decision path.
const replay = await guard.replay({ tenant, proposal: proposed.proposal });
console.log(`5. decision path: ${replay.decisionPath.join(' -> ')}`);
const verdict = await guard.verifyLedger({ tenant });
console.log(`   ledger: ${verdict.kind}, ${verdict.count} hash-chained events`);
const jsonl = await guard.exportLedger({ tenant });
console.log(`   first event: ${jsonl.split('\n')[0].slice(0, 150)}…`);

if (provider.refunds.size !== 1) {
  console.error('Expected exactly one refund');
  process.exit(1);
}

/**
 * The load a Sideguard contender runs: the no-op action (its executor and verifier only count
 * and answer), bounded measurements of `guard.run`, and the 64-caller duplicate storm.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineAction } from '../../../dist/index.js';
import { driveIds } from './stats.mjs';

/** The tenant every single-tenant measurement uses (and the growth suite's measured tenant). */
export const TENANT = 'bench-tenant';

/** Outcomes that answer a storm caller for good: the effect ran, or it is this one proposal. */
const DEFINITE = new Set(['verified', 'replayed']);

export function newCounter() {
  return { executions: 0, byEffect: new Map() };
}

/** Counts an execution; per effect only for storms, so the map stays small. */
export function count(counter, effect) {
  counter.executions += 1;
  if (effect.startsWith('storm-'))
    counter.byEffect.set(effect, (counter.byEffect.get(effect) ?? 0) + 1);
}

export function noopAction(counter) {
  const receipt = (context) => ({
    id: `noop_${context.providerIdempotencyKey.slice(3, 27)}`,
    provider: 'noop',
  });
  return defineAction({
    type: { namespace: 'bench', name: 'noop', version: 1 },
    input: z.object({ effect: z.string(), requestId: z.string() }),
    protectedFields: ['effect'],
    policy: () => ({ decision: 'allow', reason: 'bench_allows' }),
    async execute(input, context) {
      count(counter, input.effect);
      return { kind: 'accepted', receipt: receipt(context) };
    },
    async verify(_input, context) {
      return { kind: 'present', receipt: receipt(context) };
    },
  });
}

/** The tenant of call `sequence`: one tenant, or actions spread round-robin over `tenants`. */
export function tenantOf(sequence, tenants = 1) {
  return tenants > 1 ? `${TENANT}-${sequence % tenants}` : TENANT;
}

/** One measurement of guard.run in this process. */
export function measureGuard(guard, action, options) {
  return driveIds(options, async (id, sequence) => {
    const outcome = await guard.run(action, {
      tenant: tenantOf(sequence, options.tenants),
      principal: 'bench',
      input: { effect: id, requestId: id },
    });
    return outcome.outcome === 'verified';
  });
}

/**
 * 64 callers propose one effect at once (each with its own request id). Reports how often the
 * executor ran, each outcome, the proposals the callers were pointed at, and the callers left
 * without a definite answer (an error, or an outcome that asks them to come back).
 */
export async function storm(guard, action, counter, label, callers = 64) {
  const effect = `storm-${label}-${randomBytes(6).toString('hex')}`;
  const latencies = [];
  const outcomes = {};
  /** Proposal id → `#n` (in order of first answer) → outcome → callers. */
  const proposals = new Map();
  let errors = 0;
  let indefinite = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      const begin = performance.now();
      try {
        const result = await guard.run(action, {
          tenant: tenantOf(0),
          principal: 'bench',
          input: { effect, requestId: `${effect}-${caller}` },
        });
        outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
        const answers = proposals.get(result.proposal) ?? {};
        answers[result.outcome] = (answers[result.outcome] ?? 0) + 1;
        proposals.set(result.proposal, answers);
        if (!DEFINITE.has(result.outcome)) indefinite += 1;
      } catch {
        errors += 1;
        indefinite += 1;
      }
      latencies.push(performance.now() - begin);
    }),
  );
  return {
    effects: counter.byEffect.get(effect) ?? 0,
    latencies,
    outcomes,
    errors,
    indefinite,
    proposals: proposals.size,
    answersByProposal: [...proposals.values()],
  };
}

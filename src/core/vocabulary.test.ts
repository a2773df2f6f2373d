import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide, PRINCIPAL } from '../../test/support/evidence-helpers.js';
import {
  createHarness,
  ERASER,
  type ProviderStep,
  refundAction,
  refundArgs,
} from '../../test/support/guard-harness.js';
import type { EffectKind } from './action.js';
import type { LedgerEventDraft } from './ledger.js';
import type { ProposalRecord, StoreCommit } from './store.js';
import {
  INITIAL_STATUSES,
  isAllowedTransition,
  OPERATOR_ONLY_TRANSITIONS,
  ProposalStatus,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from './vocabulary.js';

const statuses = Object.values(ProposalStatus);

const operatorOnly = (from: ProposalStatus, to: ProposalStatus): boolean =>
  OPERATOR_ONLY_TRANSITIONS.some(([a, b]) => a === from && b === to);

/** What the store must decide for one attempted move: the table plus the store rules. */
function storeAccepts(
  from: ProposalStatus,
  to: ProposalStatus,
  step: { readonly claim: boolean; readonly attested: boolean; readonly receipt: boolean },
): boolean {
  if (!isAllowedTransition(from, to)) return false;
  if (to === 'executing' && !step.claim) return false;
  if (step.attested) return true;
  if (operatorOnly(from, to)) return false;
  return !(to === 'verified' && !step.receipt);
}

const event = (
  proposal: string,
  type: LedgerEventDraft['type'],
  status: ProposalStatus,
  revision: number,
): LedgerEventDraft => ({
  proposal,
  type,
  at: new Date(0).toISOString(),
  actionType: null,
  status,
  revision,
  data: {},
});

describe('the transition table', () => {
  it('reaches every status from an initial one', () => {
    const seen = new Set<ProposalStatus>(INITIAL_STATUSES);
    const queue = [...INITIAL_STATUSES];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const to of TRANSITIONS[next]) {
        if (!seen.has(to)) {
          seen.add(to);
          queue.push(to);
        }
      }
    }
    expect([...seen].sort()).toEqual([...statuses].sort());
  });

  it('lets terminal statuses go nowhere but to an erasure tombstone, which is absorbing', () => {
    for (const status of TERMINAL_STATUSES) {
      expect(TRANSITIONS[status].filter((to) => to !== 'erased')).toEqual([]);
    }
    expect(TRANSITIONS.erased).toEqual([]);
  });

  it('never lets an in-flight proposal be erased or leave executing without an outcome', () => {
    for (const inFlight of ['executing', 'failed_unknown', 'verification_pending'] as const) {
      expect(isAllowedTransition(inFlight, 'erased')).toBe(false);
    }
    expect(isAllowedTransition('executing', 'authorized')).toBe(false);
    expect(isAllowedTransition('executing', 'awaiting_authority')).toBe(false);
  });

  it('allows only the moves the guard makes: no re-entry into executing, no unattested absence', () => {
    expect(isAllowedTransition('executing', 'executing')).toBe(false);
    expect(isAllowedTransition('verification_pending', 'failed_known')).toBe(false);
    expect(isAllowedTransition('verification_unresolved', 'verification_pending')).toBe(false);
    for (const [from, to] of OPERATOR_ONLY_TRANSITIONS) {
      expect(isAllowedTransition(from, to)).toBe(true);
    }
  });

  it('is enforced by the store with its rules (claim, attestation, receipt) for any moves (property)', async () => {
    const step = fc.record({
      to: fc.constantFrom(...statuses),
      claim: fc.boolean(),
      attested: fc.boolean(),
      receipt: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INITIAL_STATUSES),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (initial, steps) => {
          const { guard, refund, store, tenant } = createHarness();
          const prepared = await guard.prepare(refund, {
            tenant,
            input: refundArgs(),
            principal: 'p',
          });
          const template = (await store.getProposal(tenant, prepared.proposal)) as ProposalRecord;
          // Re-create the record in the chosen initial status under a new id.
          const id = `${template.proposal}-x`;
          let current: ProposalRecord = { ...template, status: initial, proposal: id, revision: 1 };
          const inserted = await store.commit({
            tenant,
            proposal: { kind: 'insert', record: current },
            events: [event(id, 'contract_validated', initial, 1)],
          });
          expect(inserted.kind).toBe('committed');
          for (const { to, claim, attested, receipt } of steps) {
            const next: ProposalRecord = {
              ...current,
              status: to,
              revision: current.revision + 1,
              receipts: receipt ? [{ id: 're_1', provider: 'payments' }] : [],
            };
            const write: StoreCommit = {
              tenant,
              proposal: {
                kind: 'update',
                expectedRevision: current.revision,
                expectedStatus: current.status,
                record: next,
              },
              events: [
                event(id, attested ? 'operator_resolved' : 'policy_decided', to, next.revision),
              ],
              ...(claim ? { claim: { effectScope: next.effectScope, proposal: id, atMs: 0 } } : {}),
            };
            if (storeAccepts(current.status, to, { claim, attested, receipt })) {
              expect((await store.commit(write)).kind).toBe('committed');
              current = next;
            } else {
              await expect(store.commit(write)).rejects.toMatchObject({
                code: 'illegal_transition',
              });
            }
            expect((await store.getProposal(tenant, id))?.revision).toBe(current.revision);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** One thing a host, an approver, an operator, the provider or time does to the guard. */
const operation = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      do: fc.constant('prepare'),
      amount: fc.constantFrom('42.00', '500.00', '5000.00'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('race') }) },
  {
    weight: 3,
    arbitrary: fc.record({
      do: fc.constantFrom('approve', 'reject'),
      authority: fc.constantFrom('finance-a', 'finance-b', 'finance-c'),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      do: fc.constant('execute'),
      step: fc.constantFrom<ProviderStep>(
        'ok',
        'fail_known',
        'lost_after_write',
        'lost_before_write',
        'throw_after_write',
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      do: fc.constantFrom('reconcile', 'resumeVerification', 'expireDue', 'compensate', 'erase'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      do: fc.constant('resolve'),
      finding: fc.constantFrom('absent', 'present'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      do: fc.constant('advance'),
      ms: fc.constantFrom(1_000, 30_000, 600_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      do: fc.constant('provider'),
      absent: fc.constantFrom('absent_final', 'absent_not_final', 'unknown'),
      blind: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constantFrom('drift', 'erase_all') }) },
);
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/** The harness refund, shaped by the run: resends declared or not, and its effect kind. */
function actionFor(
  h: ReturnType<typeof createHarness>,
  resends: boolean,
  effectKind: EffectKind,
  world: { blind: boolean },
) {
  const partial = async () => ({
    kind: 'partial' as const,
    items: [
      {
        step: 'refund',
        outcome: 'committed' as const,
        receipt: { id: 're_p', provider: 'payments' },
      },
      { step: 'close', outcome: 'failed' as const, reason: 'crm_down' },
    ],
  });
  const base = refundAction(h.provider);
  return refundAction(h.provider, {
    allowResendAfterFinalAbsence: resends,
    verificationDelayMs: 30_000,
    maxVerificationAttempts: 3,
    operators: ['ops-1'],
    effectKind,
    // A blind verifier cannot see the provider: it answers "unknown" for writes too.
    verify: async (input, context) =>
      world.blind
        ? { kind: 'unknown', reason: 'provider_down' }
        : base.config.verify(input, context),
    ...(effectKind === 'single' ? {} : { execute: partial }),
  });
}

/** Applies one operation to the proposal under test; returns the proposal to look at next. */
async function apply(
  h: ReturnType<typeof createHarness>,
  refund: ReturnType<typeof actionFor>,
  world: { blind: boolean; races: number },
  proposal: string | undefined,
  op: Operation,
): Promise<string | undefined> {
  const { tenant } = h;
  if (op.do === 'prepare') {
    const input = refundArgs({ amount: op.amount });
    return (await h.guard.prepare(refund, { tenant, input, principal: PRINCIPAL })).proposal;
  }
  if (op.do === 'race') {
    world.races += 1;
    const raced = await Promise.all(
      ['a', 'b'].map((requestId) =>
        h.guard.prepare(refund, {
          tenant,
          input: refundArgs({ orderId: `ord_race_${world.races}`, requestId }),
          principal: PRINCIPAL,
        }),
      ),
    );
    await Promise.all(raced.map((r) => h.guard.execute(refund, { tenant, proposal: r.proposal })));
    return raced[0]?.proposal;
  }
  if (op.do === 'advance') h.clock.advance(op.ms);
  // The world drifts until the next execute sees it.
  if (op.do === 'drift') h.provider.drifted = true;
  if (op.do === 'erase_all') {
    const ids = new Set((await h.store.readLedger({ tenant })).map((event) => event.proposal));
    for (const id of ids) {
      if (id === null || (await h.store.getProposal(tenant, id)) === undefined) continue;
      await h.guard.erase(refund, { tenant, proposal: id, reader: ERASER });
    }
  }
  if (op.do === 'provider') {
    h.provider.absentAnswer = op.absent;
    world.blind = op.blind;
  }
  if (proposal === undefined) return proposal;
  const address = { tenant, proposal };
  switch (op.do) {
    case 'approve':
    case 'reject':
      if ((await h.store.getProposal(tenant, proposal))?.snapshot) {
        await decide(h, proposal, op.authority, { decision: op.do }, refund);
      }
      break;
    case 'execute': {
      h.provider.steps = [op.step];
      const executed = await h.guard.execute(refund, address);
      h.provider.drifted = false;
      return executed.freshProposal ?? proposal;
    }
    case 'reconcile':
    case 'resumeVerification':
    case 'expireDue':
    case 'compensate':
      await h.guard[op.do](refund, address);
      break;
    case 'erase':
      await h.guard.erase(refund, { ...address, reader: ERASER });
      break;
    case 'resolve':
      await h.guard.resolveOutcome(refund, {
        ...address,
        operator: 'ops-1',
        finding:
          op.finding === 'absent'
            ? { kind: 'absent' }
            : { kind: 'present', receipt: { id: 're_ops', provider: 'payments' } },
      });
      break;
  }
  return proposal;
}

/** Runs operations on a fresh harness; returns every status move its ledger records. */
async function movesOf(
  resends: boolean,
  effectKind: EffectKind,
  operations: readonly Operation[],
): Promise<string[]> {
  const h = createHarness();
  const world = { blind: false, races: 0 };
  const refund = actionFor(h, resends, effectKind, world);
  let proposal: string | undefined;
  for (const op of operations) proposal = await apply(h, refund, world, proposal, op);
  const moves: string[] = [];
  for (const path of statusPaths(await h.store.readLedger({ tenant: h.tenant }))) {
    for (let i = 1; i < path.length; i++) moves.push(`${path[i - 1]}->${path[i]}`);
  }
  return moves;
}

const notInTable = (moves: readonly string[]): string[] =>
  moves.filter((move) => {
    const [from, to] = move.split('->') as [ProposalStatus, ProposalStatus];
    return !isAllowedTransition(from, to);
  });

type Amount = '42.00' | '500.00' | '5000.00';
type Authority = 'finance-a' | 'finance-b' | 'finance-c';
type AbsentAnswer = 'absent_final' | 'absent_not_final' | 'unknown';
const prepare = (amount: Amount): Operation => ({ do: 'prepare', amount });
const execute = (step: ProviderStep): Operation => ({ do: 'execute', step });
const advance = (ms: 1_000 | 30_000 | 600_000): Operation => ({ do: 'advance', ms });
const provider = (absent: AbsentAnswer, blind = false): Operation => ({
  do: 'provider',
  absent,
  blind,
});
const act = (what: 'reconcile' | 'resumeVerification' | 'expireDue' | 'compensate' | 'erase') =>
  ({ do: what }) as Operation;
const decideAs = (what: 'approve' | 'reject', authority: Authority): Operation => ({
  do: what,
  authority,
});
const resolve = (finding: 'absent' | 'present'): Operation => ({ do: 'resolve', finding });
const WINDOW = 30_000 as const;

/** Scripts that together make every move of the table, each as the guard really makes it. */
const SCRIPTS: readonly { resends: boolean; effectKind: EffectKind; ops: Operation[] }[] = [
  { resends: false, effectKind: 'single', ops: [prepare('42.00'), execute('ok'), act('erase')] },
  {
    resends: false,
    effectKind: 'single',
    ops: [
      prepare('500.00'),
      decideAs('approve', 'finance-a'),
      decideAs('approve', 'finance-b'),
      advance(600_000),
      execute('ok'),
      advance(600_000),
      act('expireDue'),
      act('erase'),
    ],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('500.00'), decideAs('reject', 'finance-a'), act('erase')],
  },
  { resends: false, effectKind: 'single', ops: [prepare('500.00'), act('erase')] },
  { resends: false, effectKind: 'single', ops: [prepare('5000.00'), act('erase')] },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), decideAs('approve', 'finance-a'), decideAs('reject', 'finance-b')],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), advance(600_000), advance(600_000), act('expireDue')],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), { do: 'drift' }, execute('ok'), { do: 'erase_all' }],
  },
  { resends: false, effectKind: 'single', ops: [{ do: 'race' }, { do: 'erase_all' }] },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), execute('fail_known'), act('erase')],
  },
  {
    resends: true,
    effectKind: 'single',
    ops: [prepare('42.00'), execute('lost_before_write'), advance(WINDOW), act('reconcile')],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [
      prepare('42.00'),
      execute('lost_before_write'),
      advance(WINDOW),
      act('reconcile'),
      act('resumeVerification'),
      resolve('absent'),
    ],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), execute('lost_before_write'), advance(WINDOW), resolve('absent')],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [prepare('42.00'), execute('lost_after_write'), advance(WINDOW), act('reconcile')],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [
      prepare('42.00'),
      provider('unknown', true),
      execute('lost_after_write'),
      resolve('present'),
    ],
  },
  // "Not yet", then a final absence: resend when declared, unresolved when not.
  ...[true, false].map((resends) => ({
    resends,
    effectKind: 'single' as const,
    ops: [
      prepare('42.00'),
      provider('absent_not_final'),
      execute('lost_before_write'),
      advance(WINDOW),
      act('reconcile'),
      provider('absent_final'),
      advance(WINDOW),
      act('reconcile'),
    ],
  })),
  {
    resends: true,
    effectKind: 'single',
    ops: [
      prepare('42.00'),
      provider('unknown'),
      execute('lost_before_write'),
      advance(WINDOW),
      act('reconcile'),
      advance(WINDOW),
      act('reconcile'),
      advance(WINDOW),
      act('reconcile'),
      provider('absent_final'),
      act('resumeVerification'),
    ],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [
      prepare('42.00'),
      provider('unknown', true),
      execute('ok'),
      advance(WINDOW),
      act('reconcile'),
      advance(WINDOW),
      act('reconcile'),
      provider('unknown'),
      act('resumeVerification'),
    ],
  },
  {
    resends: false,
    effectKind: 'single',
    ops: [
      prepare('42.00'),
      provider('unknown', true),
      execute('lost_after_write'),
      advance(WINDOW),
      act('reconcile'),
      provider('unknown'),
      advance(WINDOW),
      act('reconcile'),
    ],
  },
  {
    resends: false,
    effectKind: 'itemized',
    ops: [prepare('42.00'), execute('ok'), act('compensate'), act('erase')],
  },
  {
    resends: false,
    effectKind: 'all_or_nothing',
    ops: [prepare('42.00'), execute('ok'), act('compensate')],
  },
];

describe('the moves the guard makes', () => {
  it('are all in the table, whatever hosts, people, providers and time do (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.constantFrom<EffectKind>('single', 'single', 'itemized', 'all_or_nothing'),
        fc.constantFrom('42.00', '500.00'),
        fc.array(operation, { minLength: 1, maxLength: 30, size: 'max' }),
        async (resends, effectKind, firstAmount, operations) => {
          const moves = await movesOf(resends, effectKind, [prepare(firstAmount), ...operations]);
          expect(notInTable(moves)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('together make every move of the table, so the table holds no move the guard never makes', async () => {
    const observed = new Set<string>();
    for (const script of SCRIPTS) {
      const moves = await movesOf(script.resends, script.effectKind, script.ops);
      expect(notInTable(moves)).toEqual([]);
      for (const move of moves) observed.add(move);
    }
    // Only a race between two prepares supersedes a proposal still awaiting authority.
    const raceOnly = ['awaiting_authority->superseded'];
    const table = Object.entries(TRANSITIONS).flatMap(([from, targets]) =>
      targets.map((to) => `${from}->${to}`),
    );
    expect(table.filter((move) => !observed.has(move) && !raceOnly.includes(move))).toEqual([]);
  });
});

/** Each proposal's statuses in ledger order, from the events that record one. */
function statusPaths(
  events: readonly { proposal: string | null; status: ProposalStatus | null }[],
): ProposalStatus[][] {
  const byProposal = new Map<string, ProposalStatus[]>();
  for (const { proposal, status } of events) {
    if (proposal === null || status === null) continue;
    byProposal.set(proposal, [...(byProposal.get(proposal) ?? []), status]);
  }
  return [...byProposal.values()];
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarness, refundArgs } from '../../test/support/guard-harness.js';
import {
  INITIAL_STATUSES,
  isAllowedTransition,
  ProposalStatus,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from './vocabulary.js';

const statuses = Object.values(ProposalStatus);

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

  it('is enforced by the store for any pair of statuses (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INITIAL_STATUSES),
        fc.array(fc.constantFrom(...statuses), { minLength: 1, maxLength: 12 }),
        async (initial, targets) => {
          const { guard, refund, store, tenant } = createHarness();
          const prepared = await guard.prepare(refund, {
            tenant,
            input: refundArgs(),
            principal: 'p',
          });
          let record = (await store.getProposal(tenant, prepared.proposal))!;
          record = { ...record, status: initial };
          // Re-create the record in the chosen initial status under a new id.
          const id = `${record.proposal}-x`;
          let current = { ...record, proposal: id, revision: 1 };
          const inserted = await store.commit({
            tenant,
            proposal: { kind: 'insert', record: current },
            events: [
              {
                proposal: id,
                type: 'contract_validated',
                at: new Date(0).toISOString(),
                actionType: null,
                status: initial,
                revision: 1,
                data: {},
              },
            ],
          });
          expect(inserted.kind).toBe('committed');
          for (const target of targets) {
            const next = { ...current, status: target, revision: current.revision + 1 };
            const write = store.commit({
              tenant,
              proposal: {
                kind: 'update',
                expectedRevision: current.revision,
                expectedStatus: current.status,
                record: next,
              },
              events: [
                {
                  proposal: id,
                  type: 'policy_decided',
                  at: new Date(0).toISOString(),
                  actionType: null,
                  status: target,
                  revision: next.revision,
                  data: {},
                },
              ],
            });
            if (isAllowedTransition(current.status, target)) {
              expect((await write).kind).toBe('committed');
              current = next;
            } else {
              await expect(write).rejects.toMatchObject({ code: 'illegal_transition' });
            }
            expect((await store.getProposal(tenant, id))?.revision).toBe(current.revision);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

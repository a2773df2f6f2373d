import { describe, expect, it } from 'vitest';
import { sampleProposal } from '../../test/support/store-records.js';
import { copyRecord } from './record-copy.js';
import type { ProposalRecord } from './store.js';

const spread = (previous: object, ...changes: object[]): object =>
  Object.assign({}, previous, ...changes);

describe('copyRecord', () => {
  const record: ProposalRecord = Object.freeze(sampleProposal('tenant-a', 'prop_0001'));

  it('gives what a spread gives: the same keys with the same values (in the guard order of fields)', () => {
    const changes = { status: 'executing' as const, lease: { owner: 'l', expiresAtMs: 5 } };
    const more = { revision: record.revision + 1, updatedAtMs: 9, dueAtMs: null };
    const copied = copyRecord(record, changes, more);
    expect(copied).toStrictEqual(spread(record, changes, more));
    expect(Object.keys(copied).sort()).toEqual(Object.keys(spread(record, changes, more)).sort());
    expect(copied).not.toBe(record);
    expect(Object.isFrozen(copied)).toBe(false);
  });

  it('adds an optional field new to the record last, and replaces one it has in place', () => {
    const withMac = copyRecord(record, {
      recordMac: { algorithm: 'hmac-sha256', keyHandle: 'k', keyVersion: 1, value: 'v' },
    });
    expect(Object.keys(withMac).at(-1)).toBe('recordMac');
    const withOutput = copyRecord(withMac, { output: null });
    expect(withOutput).toStrictEqual(spread(withMac, { output: null }));
    expect(Object.keys(withOutput).slice(-2)).toEqual(['recordMac', 'output']);
    expect(copyRecord(withOutput, { status: 'verified' })).toStrictEqual(
      spread(withOutput, { status: 'verified' }),
    );
  });

  it('keeps a field it does not know, an undefined field and an inherited key exactly as a spread does', () => {
    const newer = { ...record, futureField: { x: 1 } } as ProposalRecord;
    expect(copyRecord(newer, { status: 'verified' })).toStrictEqual(
      spread(newer, { status: 'verified' }),
    );
    const undefinedOutput = { ...record, output: undefined } as unknown as ProposalRecord;
    expect(Object.keys(copyRecord(undefinedOutput, { revision: 7 }))).toContain('output');
    const clearing = { reasonCode: undefined } as unknown as Partial<ProposalRecord>;
    expect(copyRecord(record, clearing)).toStrictEqual(spread(record, clearing));
    const inherited = Object.assign(Object.create({ inheritedKey: 1 }), { status: 'verified' });
    expect(copyRecord(record, inherited)).toStrictEqual(spread(record, inherited));
  });

  it('copies null values of a change (a lease released, a reason cleared)', () => {
    const leased = copyRecord(record, { lease: { owner: 'o', expiresAtMs: 1 }, reasonCode: 'r' });
    const released = copyRecord(leased, { lease: null, reasonCode: null });
    expect(released.lease).toBeNull();
    expect(released.reasonCode).toBeNull();
  });
});

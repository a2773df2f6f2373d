import { describe, expect, it } from 'vitest';
import { sampleProposal } from '../../../test/support/store-records.js';
import type { LedgerEvent } from '../ledger.js';
import { holdsEffectClaim, ledgerRevisions } from './store-tampering.js';

/** Events of one proposal as `[sequence, revision]` pairs. */
const events = (pairs: readonly (readonly [number, number | null])[]): LedgerEvent[] =>
  pairs.map(([sequence, revision]) => ({
    tenant: 't',
    sequence,
    previousHash: '0'.repeat(64),
    hash: '0'.repeat(64),
    proposal: 'p',
    type: 'commit_started',
    at: '2026-01-01T00:00:00.000Z',
    actionType: null,
    status: null,
    revision,
    data: {},
  }));

describe('ledgerRevisions', () => {
  it('reads the highest revision of an ordinary history, other tenants’ events in between', () => {
    expect(
      ledgerRevisions(
        events([
          [1, null],
          [2, null],
          [3, 1],
          [7, 2],
          [8, null],
          [9, 3],
        ]),
      ),
    ).toEqual({ highest: 3, rewound: false });
    expect(ledgerRevisions([])).toEqual({ highest: undefined, rewound: false });
  });

  it('accepts two events of one commit stamped with the same revision', () => {
    expect(
      ledgerRevisions(
        events([
          [3, 1],
          [4, 2],
          [5, 2],
        ]),
      ),
    ).toEqual({ highest: 2, rewound: false });
  });

  it('sees a rollback the guard already wrote on top of: a lower or repeated revision later', () => {
    expect(
      ledgerRevisions(
        events([
          [3, 1],
          [4, 2],
          [5, 3],
          [9, 2],
        ]),
      ).rewound,
    ).toBe(true);
    expect(
      ledgerRevisions(
        events([
          [3, 1],
          [4, 2],
          [9, 2],
        ]),
      ).rewound,
    ).toBe(true);
  });
});

describe('holdsEffectClaim', () => {
  const record = sampleProposal('t', 'p');
  it.each([
    ['authorized, never sent', record, false],
    ['executing', { ...record, status: 'executing' as const }, true],
    ['verified', { ...record, status: 'verified' as const }, true],
    ['authorized again after a resend', { ...record, resendGeneration: 1 }, true],
    [
      'erased after a write',
      { ...record, status: 'erased' as const, receipts: [{ id: 're_1', provider: 'payments' }] },
      true,
    ],
    ['erased before any write', { ...record, status: 'erased' as const }, false],
    ['failed_known (hands the claim over)', { ...record, status: 'failed_known' as const }, false],
    ['stale after a resend', { ...record, status: 'stale' as const, resendGeneration: 2 }, false],
  ])('%s', (_name, candidate, holds) => {
    expect(holdsEffectClaim(candidate)).toBe(holds);
  });
});

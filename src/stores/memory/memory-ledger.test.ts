import { describe, expect, it } from 'vitest';
import { type LedgerEvent, sealLedgerEvents } from '../../core/ledger.js';
import { appendEvents, emptyMemoryLedger, queryEvents, truncateEvents } from './memory-ledger.js';

const draft = (proposal: string | null, reasonCode: string) => ({
  proposal,
  type: 'policy_decided' as const,
  at: '2026-12-01T00:00:00.000Z',
  actionType: 'bench.refund@1',
  status: null,
  revision: null,
  data: { reasonCode },
});

describe('the memory ledger', () => {
  it('indexes events by proposal in sequence order across commits that interleave proposals', () => {
    const ledger = emptyMemoryLedger();
    let head: { sequence: number; hash: string } | undefined;
    const commits = [
      [draft('p1', 'a'), draft('p1', 'b'), draft('p2', 'c'), draft('p1', 'd')],
      [draft(null, 'tenant'), draft('p2', 'e')],
      [draft('p1', 'f')],
      [draft('p3', 'g'), draft(null, 'tenant'), draft('p3', 'h'), draft('p2', 'i')],
    ];
    const all: LedgerEvent[] = [];
    for (const drafts of commits) {
      const sealed = sealLedgerEvents('t', head, drafts);
      appendEvents(ledger, sealed);
      all.push(...sealed);
      const last = sealed.at(-1)!;
      head = { sequence: last.sequence, hash: last.hash };
    }
    expect(queryEvents(ledger, { tenant: 't' })).toEqual(all);
    const codes = (proposal: string, afterSequence?: number) =>
      queryEvents(ledger, {
        tenant: 't',
        proposal,
        ...(afterSequence === undefined ? {} : { afterSequence }),
      }).map((event) => event.data.reasonCode);
    expect(codes('p1')).toEqual(['a', 'b', 'd', 'f']);
    expect(codes('p2')).toEqual(['c', 'e', 'i']);
    expect(codes('p3')).toEqual(['g', 'h']);
    expect(codes('p1', 4)).toEqual(['f']);
    // A reader's array is its own: appending later does not change what it was given.
    const before = queryEvents(ledger, { tenant: 't', proposal: 'p3' });
    appendEvents(ledger, sealLedgerEvents('t', head, [draft('p3', 'j')]));
    expect(before.map((event) => event.data.reasonCode)).toEqual(['g', 'h']);
    expect(codes('p3')).toEqual(['g', 'h', 'j']);
    truncateEvents(ledger, 5);
    expect(codes('p1')).toEqual(['f']);
    expect(codes('p2')).toEqual(['e', 'i']);
  });
});

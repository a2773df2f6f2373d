/** The mapping from guard outcomes to the tool results the framework adapters return. */
import { describe, expect, it } from 'vitest';
import type { GuardResult } from '../../core/guard.js';
import { ProposalStatus } from '../../core/vocabulary.js';
import { toolOutputOf } from './tool-output.js';

const result = (overrides: Partial<GuardResult>): GuardResult => ({
  proposal: 'prop_1',
  status: null,
  outcome: 'verified',
  revision: 1,
  ...overrides,
});

describe('the tool result a model sees', () => {
  it('a pending approval says not to retry, and is not a duplicate', () => {
    const output = toolOutputOf(
      result({ status: 'awaiting_authority', outcome: 'authority_pending' }),
    );
    expect(output).toMatchObject({ status: 'approval_pending', duplicate: false });
    expect(output.message).toMatch(/do not retry/);
  });

  it('a replay of a done effect is a duplicate with the original result', () => {
    const output = toolOutputOf(
      result({
        status: 'verified',
        outcome: 'replayed',
        output: { id: 're_1' },
        result: { receipts: [{ id: 're_1', provider: 'payments' }], compensationReceipts: [] },
      }),
    );
    expect(output).toMatchObject({
      status: 'done',
      duplicate: true,
      result: { id: 're_1' },
      receipts: [{ id: 're_1' }],
    });
  });

  it('a replay is judged by its proposal status: executing is in doubt, denied is denied', () => {
    expect(toolOutputOf(result({ status: 'executing', outcome: 'replayed' })).status).toBe(
      'in_doubt',
    );
    expect(toolOutputOf(result({ status: 'denied', outcome: 'replayed' })).status).toBe('denied');
  });

  it('every proposal status gives a tool status', () => {
    for (const status of Object.values(ProposalStatus)) {
      expect(toolOutputOf(result({ status, outcome: 'replayed' })).status).toEqual(
        expect.any(String),
      );
    }
  });
});

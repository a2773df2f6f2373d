/**
 * I8 over gateway decisions: a `gateway_decided` event passes with its allow-listed keys and fails
 * when it carries anything else (a body, an argument) or a private value of the case.
 */
import { describe, expect, it } from 'vitest';
import { type LedgerEventDraft, sealLedgerEvents } from '../../core/ledger.js';
import type { EvidenceModel } from '../evidence-model.js';
import { judgePrivate } from './i8-private.js';

const decided = (data: LedgerEventDraft['data']): LedgerEventDraft => ({
  proposal: null,
  type: 'gateway_decided',
  at: '2026-01-01T00:00:00.000Z',
  actionType: null,
  status: null,
  revision: null,
  data,
});

const modelOf = (drafts: LedgerEventDraft[], privateValues: string[] = []) =>
  ({
    tenant: 'acme',
    events: sealLedgerEvents('acme', undefined, drafts),
    privateValues,
    records: [],
  }) as unknown as EvidenceModel;

const allowed = {
  door: 'http',
  decision: 'guarded',
  reason: 'bound_write',
  upstream: 'payments',
  subject: 'POST /v1/refunds',
  binding: 'refund',
  agent: 'support-bot',
  principal: 'support-team',
  proposal: 'prop_1',
  code: 'completed',
  status: 200,
  requestDigest: 'hmac-sha256:abc',
};

describe('I8 on gateway decision events', () => {
  it('passes an event with allow-listed keys only', () => {
    expect(judgePrivate(modelOf([decided(allowed)])).verdict).toBe('pass');
  });

  it('fails an event that carries a key outside the allow-list', () => {
    const verdict = judgePrivate(modelOf([decided({ ...allowed, body: 'amount=500' })]));
    expect(verdict.verdict).toBe('fail');
    expect(verdict.evidence).toContain('gateway decision event 1 carries data outside');
  });

  it('fails an event that holds a private value of the case', () => {
    const verdict = judgePrivate(
      modelOf([decided({ ...allowed, subject: 'POST jane@example.com' })], ['jane@example.com']),
    );
    expect(verdict.verdict).toBe('fail');
  });
});

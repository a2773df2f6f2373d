import { describe, expect, it } from 'vitest';
import { countWrites } from './observations.js';
import type { SandboxReceipt } from './state-store.js';

function receipt(effectKey: string | null, operation = 'create_refund'): SandboxReceipt {
  return {
    receiptId: 'rcpt_000001',
    provider: 'payments',
    operation,
    objectId: 're_1',
    effectKey,
    idempotencyKey: null,
    requestId: 'req_1',
    committedAt: '2026-01-01T00:00:00.000Z',
  };
}

describe('countWrites', () => {
  it('counts writes per operation and per effect key, skipping writes without a key', () => {
    const counts = countWrites([receipt('a'), receipt('a'), receipt(null), receipt('b', 'other')]);
    expect(counts).toEqual({
      total: 4,
      byOperation: { 'payments.create_refund': 3, 'payments.other': 1 },
      byEffect: {
        a: { count: 2, byOperation: { 'payments.create_refund': 2 } },
        b: { count: 1, byOperation: { 'payments.other': 1 } },
      },
    });
  });

  it('treats effect keys that name Object.prototype members as plain keys', () => {
    const counts = countWrites([
      receipt('constructor'),
      receipt('__proto__'),
      receipt('__proto__'),
    ]);
    expect(counts.byEffect.constructor).toEqual({
      count: 1,
      byOperation: { 'payments.create_refund': 1 },
    });
    expect(Object.getOwnPropertyDescriptor(counts.byEffect, '__proto__')?.value).toEqual({
      count: 2,
      byOperation: { 'payments.create_refund': 2 },
    });
    expect(JSON.stringify(counts.byEffect)).toContain('"__proto__":{"count":2');
  });
});

import { describe, expect, it } from 'vitest';
import type { StripeAttempt } from './stripe-call-scope.js';
import { classifyStripeAttempts } from './stripe-outcome.js';

const response = (status: number, errorCode?: string): StripeAttempt => ({
  kind: 'response',
  method: 'POST',
  status,
  headers: {},
  ...(errorCode === undefined ? {} : { errorCode }),
});
const transport = (
  sent: boolean,
  failure: 'connection_refused' | 'connection_closed' | 'retry_refused',
): StripeAttempt => ({
  kind: 'transport',
  method: 'POST',
  sent,
  failure,
});

describe('classifyStripeAttempts', () => {
  it('no attempt at all: the client refused before sending', () => {
    expect(classifyStripeAttempts([])).toEqual({
      kind: 'failed_known',
      reason: 'stripe_request_not_sent',
    });
  });

  it.each([
    [400, 'amount_too_large'],
    [401, undefined],
    [402, 'card_declined'],
    [403, undefined],
    [404, 'resource_missing'],
    [429, 'rate_limit'],
  ])('Stripe documents %i as not carried out: failed_known', (status, code) => {
    expect(classifyStripeAttempts([response(status, code)])).toEqual({
      kind: 'failed_known',
      reason: code === undefined ? `http_${status}` : `http_${status}_${code}`,
    });
  });

  it.each([409, 424, 500, 502, 503, 504])(
    '%i may have been carried out: failed_unknown',
    (status) => {
      expect(classifyStripeAttempts([response(status)]).kind).toBe('failed_unknown');
    },
  );

  it('a 2xx the client could not read is failed_unknown (the write happened)', () => {
    expect(classifyStripeAttempts([response(200)])).toEqual({
      kind: 'failed_unknown',
      reason: 'stripe_response_unreadable',
    });
  });

  it('one unknown attempt makes the call unknown, whatever came after it', () => {
    expect(
      classifyStripeAttempts([
        transport(true, 'connection_closed'),
        transport(false, 'retry_refused'),
      ]),
    ).toEqual({ kind: 'failed_unknown', reason: 'transport_connection_closed' });
    expect(
      classifyStripeAttempts([
        transport(true, 'connection_closed'),
        response(400, 'idempotency_error'),
      ]),
    ).toEqual({ kind: 'failed_unknown', reason: 'transport_connection_closed' });
  });

  it('attempts that all certainly failed are failed_known, with the last reason', () => {
    expect(
      classifyStripeAttempts([transport(false, 'connection_refused'), response(429, 'rate_limit')]),
    ).toEqual({ kind: 'failed_known', reason: 'http_429_rate_limit' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  classifyHttpStatus,
  genericHttpRules,
  httpReason,
  RateLimitReading,
  reasonToken,
} from './http-outcome.js';

describe('classifyHttpStatus with the generic rules', () => {
  it.each([200, 201, 202, 204, 299])('%i is a write that happened', (status) => {
    expect(classifyHttpStatus(status)).toEqual({ kind: 'succeeded' });
  });

  it.each(genericHttpRules.notApplied)('%i is failed_known', (status) => {
    expect(classifyHttpStatus(status)).toEqual({ kind: 'failed_known', reason: `http_${status}` });
  });

  it.each([301, 307, 308, 402, 408, 409, 410, 421, 424, 500, 502, 503, 504])(
    '%i is failed_unknown (redirects, conflicts, undocumented 4xx, every 5xx)',
    (status) => {
      expect(classifyHttpStatus(status).kind).toBe('failed_unknown');
    },
  );

  it('429 is failed_known only with Retry-After', () => {
    expect(classifyHttpStatus(429, { headers: { 'retry-after': '2' } })).toEqual({
      kind: 'failed_known',
      reason: 'http_429',
    });
    expect(classifyHttpStatus(429, { headers: {} }).kind).toBe('failed_unknown');
  });

  it('a provider whose rate limiter runs before execution makes every 429 failed_known', () => {
    const rules = { notApplied: [400], rateLimited: RateLimitReading.not_applied };
    expect(classifyHttpStatus(429, { rules }).kind).toBe('failed_known');
    expect(classifyHttpStatus(404, { rules }).kind).toBe('failed_unknown');
    const never = { notApplied: [], rateLimited: RateLimitReading.unknown };
    expect(classifyHttpStatus(429, { rules: never, headers: { 'retry-after': '1' } }).kind).toBe(
      'failed_unknown',
    );
  });

  it('statuses that are not final responses are failed_unknown, never a success', () => {
    for (const status of [0, 100, 199, 600, 200.5, Number.NaN]) {
      expect(classifyHttpStatus(status)).toEqual({
        kind: 'failed_unknown',
        reason: 'http_status_invalid',
      });
    }
  });
});

describe('reason codes carry the provider code, never its text', () => {
  it('adds a safe provider code: http_402_card_declined', () => {
    expect(
      classifyHttpStatus(402, {
        errorCode: 'card_declined',
        rules: { notApplied: [402], rateLimited: 'unknown' },
      }),
    ).toEqual({
      kind: 'failed_known',
      reason: 'http_402_card_declined',
    });
    expect(httpReason(400, 'Amount-Too.Large')).toBe('http_400_amount_too_large');
  });

  it('drops anything that is not a short token (free text, names, emoji, long strings)', () => {
    for (const value of [
      'Your card was declined, Jane Doe',
      'déclinée',
      'code 🙂',
      'x'.repeat(41),
      '',
      42,
      null,
    ]) {
      expect(reasonToken(value)).toBeUndefined();
    }
    expect(httpReason(402, 'Card declined for jane@example.com')).toBe('http_402');
  });
});

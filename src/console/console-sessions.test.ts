import { describe, expect, it } from 'vitest';
import { createManualClock } from '../core/clock.js';
import { createLoginLimiter } from './console-login-limiter.js';
import { createSessionStore } from './console-sessions.js';

describe('console sessions', () => {
  it('ends a session after its idle time and at its maximum age, and on destroy', () => {
    const clock = createManualClock();
    const sessions = createSessionStore({ clock, idleMs: 1_000, maxAgeMs: 2_500 });
    const session = sessions.create('finance-a');
    expect(session.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    clock.advance(900);
    expect(sessions.get(session.id)?.approver).toBe('finance-a');
    clock.advance(900);
    expect(sessions.get(session.id)?.approver).toBe('finance-a'); // idle time renewed
    clock.advance(800); // 2,600 ms old: past the maximum age
    expect(sessions.get(session.id)).toBeUndefined();
    const other = sessions.create('finance-b');
    sessions.destroy(other.id);
    expect(sessions.get(other.id)).toBeUndefined();
    expect(sessions.get(undefined)).toBeUndefined();
  });

  it('accepts only the session’s own CSRF token', () => {
    const sessions = createSessionStore({ clock: createManualClock() });
    const a = sessions.create('finance-a');
    const b = sessions.create('finance-b');
    expect(sessions.checkCsrf(a, a.csrfToken)).toBe(true);
    expect(sessions.checkCsrf(a, b.csrfToken)).toBe(false);
    expect(sessions.checkCsrf(a, undefined)).toBe(false);
    expect(sessions.checkCsrf(a, `${a.csrfToken}x`)).toBe(false);
  });
});

describe('login limiter', () => {
  it('refuses after the allowed failures until the window moves on', () => {
    const clock = createManualClock();
    const limiter = createLoginLimiter({ clock, maxFailures: 2, windowMs: 10_000 });
    const keys = ['ip:1', 'id:finance-a'];
    limiter.fail(keys);
    expect(limiter.retryAfterMs(keys)).toBe(0);
    clock.advance(1_000);
    limiter.fail(keys);
    expect(limiter.retryAfterMs(keys)).toBe(9_000);
    expect(limiter.retryAfterMs(['ip:2'])).toBe(0);
    clock.advance(8_999);
    expect(limiter.retryAfterMs(keys)).toBe(1);
    clock.advance(1); // the first failure leaves the window
    expect(limiter.retryAfterMs(keys)).toBe(0);
  });
});

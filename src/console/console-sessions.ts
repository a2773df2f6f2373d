/**
 * Console sessions: a random id in an `HttpOnly; SameSite=Strict` cookie, the state on the
 * server (who, CSRF token, expiry). Logging out or expiring removes the state, so a replayed
 * cookie is worth nothing.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/guard.js';

/** One logged-in person. */
export interface ConsoleSession {
  readonly id: string;
  readonly approver: string;
  /** Sent with every form; compared in constant time. */
  readonly csrfToken: string;
  readonly createdAtMs: number;
  expiresAtMs: number;
}

/** Options of {@link createSessionStore}. */
export interface SessionStoreConfig {
  readonly clock: Clock;
  /** Idle time after which a session ends, in ms. @default 1_800_000 (30 minutes) */
  readonly idleMs?: number;
  /** Longest life of a session, in ms. @default 43_200_000 (12 hours) */
  readonly maxAgeMs?: number;
}

/** Server-side session state. */
export interface SessionStore {
  create(approver: string): ConsoleSession;
  /** The live session for a cookie value (its idle expiry is extended), or undefined. */
  get(id: string | undefined): ConsoleSession | undefined;
  destroy(id: string | undefined): void;
  /** Whether `token` is the session's CSRF token. */
  checkCsrf(session: ConsoleSession, token: unknown): boolean;
}

const token = (): string => randomBytes(32).toString('base64url');

/** Constant-time string comparison. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Creates an in-memory session store (one console process). */
export function createSessionStore(config: SessionStoreConfig): SessionStore {
  const idleMs = config.idleMs ?? 1_800_000;
  const maxAgeMs = config.maxAgeMs ?? 43_200_000;
  const sessions = new Map<string, ConsoleSession>();
  const sweep = (now: number) => {
    for (const [id, session] of sessions) if (session.expiresAtMs <= now) sessions.delete(id);
  };
  return {
    create(approver) {
      const now = config.clock.now();
      sweep(now);
      const session: ConsoleSession = {
        id: token(),
        approver,
        csrfToken: token(),
        createdAtMs: now,
        expiresAtMs: now + idleMs,
      };
      sessions.set(session.id, session);
      return session;
    },
    get(id) {
      if (id === undefined || id.length > 100) return undefined;
      const session = sessions.get(id);
      const now = config.clock.now();
      if (session === undefined) return undefined;
      if (session.expiresAtMs <= now) {
        sessions.delete(id);
        return undefined;
      }
      session.expiresAtMs = Math.min(now + idleMs, session.createdAtMs + maxAgeMs);
      return session;
    },
    destroy(id) {
      if (id !== undefined) sessions.delete(id);
    },
    checkCsrf(session, candidate) {
      return typeof candidate === 'string' && sameSecret(candidate, session.csrfToken);
    },
  };
}

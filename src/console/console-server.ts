/**
 * `createConsole`: the approvals console on a port of its own (loopback unless configured), for
 * `sideguard serve` and for library hosts that share the guard's store.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { createApprovalsService } from '../approvals/approvals-service.js';
import { type ApproverConfig, createApproverRegistry } from '../approvals/approver-registry.js';
import type { ActionDefinition } from '../core/action.js';
import type { Clock, Guard } from '../core/guard.js';
import type { GuardStore } from '../core/store.js';
import { createConsoleApp } from './console-app.js';
import { createLoginLimiter } from './console-login-limiter.js';
import { createSessionStore } from './console-sessions.js';

/** What {@link createConsole} needs. */
export interface ConsoleConfig {
  readonly guard: Guard;
  readonly store: GuardStore;
  readonly actions: Iterable<ActionDefinition>;
  /** The people who may log in (hashed secrets). */
  readonly approvers: readonly ApproverConfig[];
  /** The tenant of approvers that name none. @default 'default' */
  readonly defaultTenant?: string;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. @default 4402 */
  readonly port?: number;
  /** Sessions, login limits and expiry checks run on it. @default the system clock */
  readonly clock?: Clock;
  /** Largest form post, in bytes. @default 16_384 */
  readonly bodyLimitBytes?: number;
  /** How often the live inbox checks for changes, in ms. @default 1_000 */
  readonly livePollMs?: number;
  /** Idle session lifetime, in ms. @default 1_800_000 */
  readonly sessionIdleMs?: number;
  /** Failed logins allowed per client and per approver in 10 minutes. @default 5 */
  readonly maxLoginFailures?: number;
  /** Set `Secure` on cookies (the console sits behind HTTPS). @default false */
  readonly secureCookies?: boolean;
}

/** A running console. */
export interface RunningConsole {
  /** `http://host:port`. */
  readonly url: string;
  /** Ends live streams and stops listening. Idempotent. */
  close(): Promise<void>;
}

const systemClock: Clock = { now: () => Date.now() };

/** Starts the console. */
export async function createConsole(config: ConsoleConfig): Promise<RunningConsole> {
  const clock = config.clock ?? systemClock;
  const registry = createApproverRegistry(config.approvers, {
    defaultTenant: config.defaultTenant ?? 'default',
  });
  const service = createApprovalsService({
    guard: config.guard,
    store: config.store,
    actions: config.actions,
    clock,
  });
  const streams = new Set<{ abort(): void }>();
  const app = createConsoleApp({
    service,
    registry,
    sessions: createSessionStore({
      clock,
      ...(config.sessionIdleMs === undefined ? {} : { idleMs: config.sessionIdleMs }),
    }),
    limiter: createLoginLimiter({
      clock,
      ...(config.maxLoginFailures === undefined ? {} : { maxFailures: config.maxLoginFailures }),
    }),
    clock,
    bodyLimitBytes: config.bodyLimitBytes ?? 16_384,
    livePollMs: config.livePollMs ?? 1_000,
    secureCookies: config.secureCookies ?? false,
    streams,
  });
  const server = createAdaptorServer({ fetch: app.fetch as never }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port ?? 4402, config.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const stream of streams) stream.abort();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 200).unref();
      });
      return closing;
    },
  };
}

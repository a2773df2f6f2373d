/**
 * The sweeper: one pass expires every due proposal and reconciles every due verification, for
 * every declared action in every tenant that has something waiting (the core's `guard.sweep`
 * does the work; this finds the tenants and counts). `sideguard sweep` runs one pass for cron;
 * `startSweeper` runs passes on an interval inside `sideguard serve`, never two at once.
 */
import type { ActionDefinition } from '../core/action.js';
import type { Guard, GuardResult } from '../core/guard.js';
import type { GuardStore } from '../core/store.js';
import type { ProposalStatus } from '../core/vocabulary.js';

/** Statuses a pass can move on (the core sweeps these when they are due). */
const SWEPT: readonly ProposalStatus[] = [
  'awaiting_authority',
  'authorized',
  'executing',
  'failed_unknown',
  'verification_pending',
];
/** Statuses that still need verification or a person after a pass. */
const UNRESOLVED: ReadonlySet<ProposalStatus | null> = new Set<ProposalStatus | null>([
  'failed_unknown',
  'verification_pending',
  'verification_unresolved',
  'executing',
]);

/** What one pass did. Every proposal the pass touched is counted once. */
export interface SweepSummary {
  /** Proposals moved to `expired`. */
  readonly expired: number;
  /** Proposals whose verification found the effect (`verified`). */
  readonly verified: number;
  /** Proposals the provider confirmed absent (`failed_known`) or allowed a resend for. */
  readonly released: number;
  /** Proposals still unknown after this pass (`failed_unknown`, `verification_*`, executing). */
  readonly unresolved: number;
  /** Proposals that ended in another status (e.g. `compensation_required`). */
  readonly other: number;
  /** `(action, tenant)` sweeps that threw (a broken store, a failing verifier). */
  readonly errors: readonly {
    readonly action: string;
    readonly tenant: string;
    readonly message: string;
  }[];
  readonly tenants: number;
  readonly actions: number;
}

/** Options of {@link sweepOnce}. */
export interface SweepOptions {
  readonly guard: Guard;
  readonly store: GuardStore;
  /** The actions to sweep, each the executable one (its `verify` asks the provider). */
  readonly actions: readonly ActionDefinition[];
  /** Only this tenant. @default every tenant with a proposal in a swept status */
  readonly tenant?: string;
  /** Most proposals one `guard.sweep` call handles per action and tenant. @default 100 */
  readonly limitPerTenant?: number;
  /** Most tenants looked up per action (bounded paging). @default 10_000 */
  readonly maxTenants?: number;
  /** Called after each action and tenant (a progress line). */
  readonly onProgress?: (progress: { action: string; tenant: string; results: number }) => void;
}

const PAGE = 1000;

/** Tenants that have a proposal of this action in a swept status, in store order. */
export async function tenantsToSweep(
  store: GuardStore,
  actionType: string,
  maxTenants: number,
): Promise<string[]> {
  const tenants = new Set<string>();
  let after: { expiresAtMs: number; tenant: string; proposal: string } | undefined;
  for (;;) {
    const page = await store.listProposals({
      statuses: SWEPT,
      actionType,
      limit: PAGE,
      ...(after === undefined ? {} : { after }),
    });
    for (const record of page) tenants.add(record.tenant);
    const last = page.at(-1);
    if (page.length < PAGE || last === undefined || tenants.size >= maxTenants) break;
    after = { expiresAtMs: last.expiresAtMs, tenant: last.tenant, proposal: last.proposal };
  }
  return [...tenants].slice(0, maxTenants);
}

type Bucket = 'expired' | 'verified' | 'released' | 'unresolved' | 'other';

function bucketOf(result: GuardResult): Bucket {
  if (result.status === 'expired') return 'expired';
  if (result.status === 'verified') return 'verified';
  if (result.status === 'failed_known' || result.outcome === 'resend_allowed') return 'released';
  if (UNRESOLVED.has(result.status)) return 'unresolved';
  return 'other';
}

/** One pass over every action and tenant. Never throws for one failing sweep: it is counted. */
export async function sweepOnce(options: SweepOptions): Promise<SweepSummary> {
  const counts: Record<Bucket, number> = {
    expired: 0,
    verified: 0,
    released: 0,
    unresolved: 0,
    other: 0,
  };
  const errors: { action: string; tenant: string; message: string }[] = [];
  const allTenants = new Set<string>();
  for (const action of options.actions) {
    const tenants =
      options.tenant === undefined
        ? await tenantsToSweep(options.store, action.typeName, options.maxTenants ?? 10_000)
        : [options.tenant];
    for (const tenant of tenants) {
      allTenants.add(tenant);
      try {
        const results = await options.guard.sweep(action, {
          tenant,
          limit: options.limitPerTenant ?? 100,
        });
        // Not yet due: the core returns the record unchanged; only moved ones count as work.
        for (const result of results) counts[bucketOf(result)] += 1;
        options.onProgress?.({ action: action.typeName, tenant, results: results.length });
      } catch (error) {
        errors.push({
          action: action.typeName,
          tenant,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
  return { ...counts, errors, tenants: allTenants.size, actions: options.actions.length };
}

/** Options of {@link startSweeper}. */
export interface SweeperConfig extends Omit<SweepOptions, 'onProgress'> {
  /** Time between the end of one pass and the start of the next, in ms. @default 5_000 */
  readonly intervalMs?: number;
  /** After every pass (for logs and tests). Must not throw. */
  readonly onPass?: (summary: SweepSummary) => void;
  /** A pass that threw as a whole (e.g. the store is gone). @default ignore */
  readonly onError?: (error: unknown) => void;
}

/** A running sweeper. */
export interface RunningSweeper {
  /** Runs a pass now (or waits for the one running) and returns its summary. */
  runNow(): Promise<SweepSummary>;
  /** Stops scheduling and waits for a running pass to end. Idempotent. */
  close(): Promise<void>;
}

/** The bounds of `intervalMs`: at least 100 ms, at most one day. */
export const SWEEP_INTERVAL_LIMITS_MS = { min: 100, max: 86_400_000, default: 5_000 } as const;

/**
 * Runs a pass every `intervalMs` (measured from the end of the previous one, so passes never
 * overlap), starting one interval after the call. The timer does not keep the process alive.
 */
export function startSweeper(config: SweeperConfig): RunningSweeper {
  const intervalMs = config.intervalMs ?? SWEEP_INTERVAL_LIMITS_MS.default;
  if (
    !Number.isInteger(intervalMs) ||
    intervalMs < SWEEP_INTERVAL_LIMITS_MS.min ||
    intervalMs > SWEEP_INTERVAL_LIMITS_MS.max
  ) {
    throw new RangeError(
      `sweeper intervalMs must be a whole number of ms from ${SWEEP_INTERVAL_LIMITS_MS.min} to ${SWEEP_INTERVAL_LIMITS_MS.max}, got ${intervalMs}`,
    );
  }
  let running: Promise<SweepSummary> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      runNow().then(schedule, schedule);
    }, intervalMs);
    timer.unref();
  };
  const runNow = (): Promise<SweepSummary> => {
    running ??= sweepOnce(config)
      .then((summary) => {
        config.onPass?.(summary);
        return summary;
      })
      .catch((error: unknown) => {
        config.onError?.(error);
        throw error;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  schedule();
  return {
    runNow,
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}

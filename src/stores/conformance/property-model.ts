/**
 * The model behind the conformance properties: random commands (inserts, compare-and-sets,
 * evidence, tenant events) turned into commits against what a reference store holds. fast-check
 * is passed in by the caller, so this package never imports it (it is an optional peer).
 */
import { StoreInvariantError } from '../../core/errors.js';
import type {
  GuardStore,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { INITIAL_STATUSES, type ProposalStatus, TRANSITIONS } from '../../core/vocabulary.js';
import {
  BASE_MS,
  claimFor,
  draft,
  evidence,
  insertCommit,
  record,
  updateCommit,
} from './conformance-fixtures.js';

/** The part of fast-check the model uses (the module namespace of `fast-check` 4). */
export type FastCheck = typeof import('fast-check');
type Arbitrary<T> = import('fast-check').Arbitrary<T>;

/** The proposal ids a property run writes. */
export const SLOTS = ['p-0', 'p-1', 'p-2', 'p-3'] as const;
const SCOPE_KEYS = ['sek-even', 'sek-odd'] as const;
/** The effect scopes those proposals share (two per scope). */
export const SCOPES = SCOPE_KEYS.map((key) => `support.refund@1#${key}`);

/** One step of a property run. */
export type Command =
  | {
      readonly kind: 'insert';
      readonly slot: number;
      readonly initial: number;
      readonly claim: boolean;
      readonly digest: number | null;
    }
  | {
      readonly kind: 'update';
      readonly slot: number;
      readonly pick: number;
      readonly stale: boolean;
      readonly claim: boolean;
      readonly digest: number | null;
      readonly events: number;
    }
  | { readonly kind: 'evidence'; readonly slot: number; readonly digests: readonly number[] }
  | { readonly kind: 'tenant_event'; readonly count: number };

/** The command generators, built from the caller's fast-check. */
export function commandArbitraries(fc: FastCheck): {
  readonly command: Arbitrary<Command>;
  readonly commands: Arbitrary<Command[]>;
} {
  const digestArbitrary = fc.option(fc.integer({ min: 0, max: 3 }), { nil: null });
  const commandArbitrary: Arbitrary<Command> = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
      initial: fc.nat(),
      claim: fc.boolean(),
      digest: digestArbitrary,
    }),
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('update' as const),
        slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
        pick: fc.nat(),
        stale: fc.boolean(),
        claim: fc.boolean(),
        digest: digestArbitrary,
        events: fc.integer({ min: 1, max: 3 }),
      }),
    },
    fc.record({
      kind: fc.constant('evidence' as const),
      slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
      digests: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
    }),
    fc.record({
      kind: fc.constant('tenant_event' as const),
      count: fc.integer({ min: 0, max: 2 }),
    }),
  );
  const commandsArbitrary = fc.array(commandArbitrary, { minLength: 1, maxLength: 30 });
  return { command: commandArbitrary, commands: commandsArbitrary };
}

const INITIAL = [...INITIAL_STATUSES];

/** Turns a command into a write against what `reference` currently holds. */
export async function buildWrite(
  reference: GuardStore,
  tenant: string,
  command: Command,
): Promise<StoreCommit> {
  if (command.kind === 'tenant_event') {
    return {
      tenant,
      events: Array.from({ length: command.count }, (_, index) =>
        draft(null, 'contract_rejected', null, null, { index }),
      ),
    };
  }
  const slot = SLOTS[command.slot] as string;
  const semanticEffectKey = SCOPE_KEYS[command.slot % 2] as string;
  if (command.kind === 'evidence') {
    return {
      tenant,
      evidence: command.digests.map((digest) => evidence(tenant, slot, `d-${digest}`)),
      events: [draft(slot, 'authority_recorded', null, null)],
    };
  }
  const evidenceOf = (digest: number | null) =>
    digest === null ? {} : { evidence: [evidence(tenant, slot, `d-${digest}`)] };
  if (command.kind === 'insert') {
    const status = INITIAL[command.initial % INITIAL.length] as ProposalStatus;
    const value = record(tenant, slot, { status, semanticEffectKey });
    return insertCommit(value, {
      ...(command.claim ? { claim: claimFor(value) } : {}),
      ...evidenceOf(command.digest),
    });
  }
  const current =
    (await reference.getProposal(tenant, slot)) ?? record(tenant, slot, { semanticEffectKey });
  const allowed = TRANSITIONS[current.status];
  const status =
    allowed.length === 0
      ? current.status
      : (allowed[command.pick % allowed.length] as ProposalStatus);
  const base: ProposalRecord =
    command.stale && current.revision > 1
      ? { ...current, revision: current.revision - 1 }
      : current;
  if (allowed.length === 0) {
    // Erased proposals accept nothing: use an allowed-looking but refused write (stale base).
    return {
      ...updateCommit({ ...base, status: 'verified' }, { status: 'erased' }),
    };
  }
  const write = updateCommit(
    base,
    { status, updatedAtMs: BASE_MS + command.pick },
    {
      ...(command.claim ? { claim: claimFor(current) } : {}),
      ...evidenceOf(command.digest),
      events: Array.from({ length: command.events }, (_, index) =>
        draft(
          slot,
          index === 0 ? 'commit_started' : 'idempotency_decided',
          status,
          base.revision + 1,
        ),
      ),
    },
  );
  return write;
}

/** A commit result, or the invariant error code it threw (so store and model compare). */
export async function settle(
  promise: Promise<StoreCommitResult>,
): Promise<StoreCommitResult | { kind: 'threw'; code: string }> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof StoreInvariantError) return { kind: 'threw', code: error.code };
    throw error;
  }
}

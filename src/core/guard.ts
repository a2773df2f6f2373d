/**
 * The guard runtime: prepare → authority → execute (claim, lease) → verify/reconcile →
 * compensate, with every decision sealed into the ledger in the same commit as its status.
 * Pure: the store, key ring, clock, ids and randomness are injected.
 */
import type {
  ActionDefinition,
  ActionInput,
  ExecuteContext,
  ExecuteResult,
  VerifyResult,
} from './action.js';
import { canonicalize, type JsonValue } from './canonical-json.js';
import { computeCommitment, keyedDigest, sha256Hex, verifyCommitment } from './commitment.js';
import { openEnvelope, sealEnvelope } from './envelope.js';
import {
  AuthorityEvidenceError,
  ConfigurationError,
  ContractViolationError,
  ProposalNotFoundError,
  SideguardError,
  StoreInvariantError,
} from './errors.js';
import {
  type AuthorityEvidence,
  authorityEvidenceSchema,
  checkEvidence,
  type EvidenceBindings,
  evidenceDigest,
  tallyAuthority,
} from './evidence.js';
import type { KeyRing } from './key-ring.js';
import { KeyPurpose } from './key-ring.js';
import {
  type LedgerEvent,
  type LedgerEventDraft,
  type LedgerVerification,
  ledgerToJsonl,
  type ProposalReplay,
  replayProposal,
  verifyLedgerChain,
} from './ledger.js';
import type {
  GuardStore,
  ProposalRecord,
  Receipt,
  StoreCommit,
  StoreCommitResult,
} from './store.js';
import {
  EFFECT_RELEASED_STATUSES,
  isAllowedTransition,
  type LedgerEventType,
  type Outcome,
  type ProposalStatus,
} from './vocabulary.js';

/** Milliseconds since the epoch. Inject a manual clock in tests. */
export interface Clock {
  now(): number;
}

/** Id generation. Inject a sequential generator for repeatable runs. */
export interface Ids {
  /** A new, globally unique proposal id. */
  proposal(): string;
  /** A new lease-owner id. */
  lease(): string;
}

/** What the event sink receives: allow-listed metadata only, never private data (I8). */
export interface GuardEvent {
  readonly tenant: string;
  readonly proposal: string | null;
  readonly actionType: string | null;
  readonly type: LedgerEventType;
  readonly status: ProposalStatus | null;
  readonly sequence: number;
  readonly reasonCode: string | null;
}

/** Receives guard events after they are durable. Failures never break an operation. */
export type GuardEventSink = (event: GuardEvent) => void | Promise<void>;

/** Dependencies of the runtime; `createGuard` (the public entry) fills defaults. */
export interface GuardCoreConfig {
  readonly store: GuardStore;
  readonly keyRing: KeyRing;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly randomBytes: (size: number) => Uint8Array;
  readonly events?: GuardEventSink;
  /** Called when the event sink throws or rejects. @default ignore */
  readonly onEventSinkError?: (error: unknown) => void;
  /** The audience authority evidence must name. @default 'sideguard' */
  readonly audience?: string;
}

/** One zod issue, reduced to what is safe to put in the ledger. */
export interface ContractIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** What a dry run predicts. */
export interface DryRunPrediction {
  /** The status a commit-mode prepare would have produced, or `replayed`. */
  readonly wouldBe: ProposalStatus | 'replayed';
  /** Whether executing would (eventually) write to the provider. */
  readonly wouldWrite: boolean;
  readonly semanticEffectKey: string;
  readonly replayOf?: string;
}

/** What every guard call returns. */
export interface GuardResult {
  /** The proposal the outcome is about (for `replayed`: the existing one). */
  readonly proposal: string;
  /** Its durable status, or null when nothing was stored (rejected, dry run). */
  readonly status: ProposalStatus | null;
  readonly outcome: Outcome;
  /** Its revision, or 0 when nothing was stored. */
  readonly revision: number;
  readonly reasonCode?: string;
  readonly preview?: JsonValue;
  readonly result?: {
    readonly receipts: readonly Receipt[];
    readonly compensationReceipts: readonly Receipt[];
  };
  /** After drift: the fresh proposal that supersedes this stale one. */
  readonly freshProposal?: string;
  readonly semanticEffectKey?: string;
  /** For `rejected` contracts: what was wrong. */
  readonly issues?: readonly ContractIssue[];
  readonly prediction?: DryRunPrediction;
}

/** What `read` returns to an authorised reader. */
export interface ProposalView extends GuardResult {
  readonly tenant: string;
  readonly actionType: string;
  readonly principal: string;
  readonly agent: string | null;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** The validated input; absent once erased. */
  readonly input?: JsonValue;
  /** The facts the policy decided on (null if none); absent once erased. */
  readonly facts?: JsonValue;
  /** What evidence must bind; pass to `buildAuthorityEvidence`. Absent once erased. */
  readonly evidenceBindings?: EvidenceBindings;
  readonly authority: {
    readonly required: number;
    readonly approvers: readonly string[];
    readonly rejectedBy: string | null;
  };
  readonly supersededBy: string | null;
  readonly supersedes: string | null;
}

/** Arguments of `prepare`. */
export interface PrepareOptions {
  readonly tenant: string;
  /** The proposed input; validated strictly against the action's schema. */
  readonly input: unknown;
  /** Who (or which service) proposes, on whose behalf the agent acts. */
  readonly principal: string;
  readonly agent?: string;
  /**
   * Facts the host read for this decision (e.g. an order's eligible refund amount), passed to the
   * policy and committed with the input. Must be canonical JSON (no floats). @default null
   */
  readonly facts?: unknown;
  /** @default 'commit' */
  readonly mode?: 'commit' | 'dry_run';
}

/** Arguments of `recordAuthority`. */
export interface RecordAuthorityOptions {
  /** The tenant of the authenticated session presenting the evidence. */
  readonly tenant: string;
  readonly evidence: unknown;
  /** The authority the host authenticated (e.g. from the approver's session). */
  readonly authenticatedAuthority: string;
}

/** Addresses one proposal. */
export interface ProposalAddress {
  readonly tenant: string;
  readonly proposal: string;
}

/** Addresses one proposal on behalf of a reader. */
export interface ReaderAddress extends ProposalAddress {
  readonly reader: string;
}

/** The guard runtime. Every method takes the action definition first. */
export interface Guard {
  prepare<A extends ActionDefinition>(action: A, options: PrepareOptions): Promise<GuardResult>;
  recordAuthority<A extends ActionDefinition>(
    action: A,
    options: RecordAuthorityOptions,
  ): Promise<GuardResult>;
  execute<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  reconcile<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  resumeVerification<A extends ActionDefinition>(
    action: A,
    address: ProposalAddress,
  ): Promise<GuardResult>;
  compensate<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  expireDue<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  /** Expires and reconciles every due proposal of this action type in a tenant. */
  sweep<A extends ActionDefinition>(
    action: A,
    options: { readonly tenant: string; readonly limit?: number },
  ): Promise<readonly GuardResult[]>;
  read<A extends ActionDefinition>(action: A, address: ReaderAddress): Promise<ProposalView>;
  erase<A extends ActionDefinition>(action: A, address: ReaderAddress): Promise<GuardResult>;
  /** prepare + execute when no approval is needed (or resumes an authorized replay). */
  run<A extends ActionDefinition>(
    action: A,
    options: Omit<PrepareOptions, 'mode'>,
  ): Promise<GuardResult>;
  /** The tenant's ledger as JSONL (one sealed event per line). */
  exportLedger(options: { readonly tenant: string }): Promise<string>;
  /** Verifies the tenant's stored chain (from its retention checkpoint, if any). */
  verifyLedger(options: { readonly tenant: string }): Promise<LedgerVerification>;
  /** A proposal's decision path reconstructed from the ledger alone. */
  replay(options: ProposalAddress): Promise<ProposalReplay | undefined>;
}

const MAX_CAS_ATTEMPTS = 16;
const MAX_INPUT_BYTES = 64 * 1024;
const MAX_ISSUES = 20;

const STATUS_OUTCOME: Readonly<Record<ProposalStatus, Outcome>> = {
  awaiting_authority: 'authority_pending',
  authorized: 'authorized',
  denied: 'denied',
  expired: 'expired',
  blocked: 'blocked',
  stale: 'stale',
  superseded: 'replayed',
  executing: 'in_progress',
  failed_known: 'failed_known',
  failed_unknown: 'failed_unknown',
  verification_pending: 'verification_pending',
  verification_unresolved: 'verification_unresolved',
  partially_succeeded: 'partially_succeeded',
  verified: 'verified',
  compensation_required: 'compensation_required',
  compensated: 'compensated',
  erased: 'erased',
};

const VERIFIABLE: ReadonlySet<ProposalStatus> = new Set([
  'failed_unknown',
  'verification_pending',
  'verification_unresolved',
]);

function checkArgument(name: string, value: unknown): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > 256 ||
    [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)
  ) {
    throw new ContractViolationError(
      'invalid_argument',
      `${name} must be a non-empty string of at most 256 characters without control characters`,
      { data: { argument: name } },
    );
  }
  return value;
}

function checkAction(action: unknown): asserts action is ActionDefinition {
  if (
    typeof action !== 'object' ||
    action === null ||
    (action as { kind?: unknown }).kind !== 'sideguard.action'
  ) {
    throw new ConfigurationError(
      'action_not_defined',
      'The first argument must be an action returned by defineAction(...)',
    );
  }
}

const shortText = (value: string, max = 200): string =>
  value.length > max ? `${value.slice(0, max)}…` : value;

/**
 * A ledger-safe tag for a thrown error: its `code` (e.g. `ECONNRESET`) or class name, never its
 * message, which may quote provider text about a customer (I8).
 */
function errorTag(error: unknown): string {
  const { code, name } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
  };
  const tag = [code, name].find(
    (value): value is string => typeof value === 'string' && /^[A-Za-z0-9_.-]{1,48}$/.test(value),
  );
  return tag === undefined ? '' : `:${tag}`;
}

/** Keeps receipts to non-private, bounded, JSON-safe fields. */
function cleanReceipt(receipt: unknown): Receipt | undefined {
  if (typeof receipt !== 'object' || receipt === null) return undefined;
  const { id, provider, details } = receipt as Record<string, unknown>;
  if (typeof id !== 'string' || id === '' || id.length > 256) return undefined;
  if (typeof provider !== 'string' || provider === '' || provider.length > 64) return undefined;
  if (details === undefined) return { id, provider };
  try {
    const json = canonicalize(details);
    if (json.length > 4096 || typeof details !== 'object' || Array.isArray(details)) {
      return { id, provider };
    }
    return { id, provider, details: JSON.parse(json) as Record<string, JsonValue> };
  } catch {
    return { id, provider };
  }
}

const receiptData = (receipt: Receipt): JsonValue => ({
  id: receipt.id,
  provider: receipt.provider,
  ...(receipt.details === undefined ? {} : { details: receipt.details }),
});

/** Builds the runtime. Prefer the public `createGuard`, which fills defaults. */
export function createGuardCore(config: GuardCoreConfig): Guard {
  const { store, keyRing, clock, ids, randomBytes } = config;
  const audience = config.audience ?? 'sideguard';

  const iso = (ms: number): string => new Date(ms).toISOString();

  /** A failing sink, or a failing error handler, must never break an operation. */
  const reportSinkError = (error: unknown): void => {
    try {
      config.onEventSinkError?.(error);
    } catch {
      // Swallowed on purpose: there is nobody left to tell.
    }
  };

  const emit = (events: readonly LedgerEvent[]): void => {
    const sink = config.events;
    if (sink === undefined) return;
    for (const event of events) {
      const reason = event.data.reasonCode;
      const payload: GuardEvent = {
        tenant: event.tenant,
        proposal: event.proposal,
        actionType: event.actionType,
        type: event.type,
        status: event.status,
        sequence: event.sequence,
        reasonCode: typeof reason === 'string' ? reason : null,
      };
      try {
        const returned = sink(payload);
        if (returned instanceof Promise) returned.catch(reportSinkError);
      } catch (error) {
        reportSinkError(error);
      }
    }
  };

  const commit = async (write: Parameters<GuardStore['commit']>[0]): Promise<StoreCommitResult> => {
    const result = await store.commit(write);
    if (result.kind === 'committed') emit(result.events);
    return result;
  };

  /**
   * Compare-and-set from `current` to `next` (revision + 1, an allowed transition), with the
   * events and optional claim or evidence that must land in the same transaction.
   */
  const update = (
    current: ProposalRecord,
    next: ProposalRecord,
    parts: Pick<StoreCommit, 'events' | 'claim' | 'evidence'>,
  ): Promise<StoreCommitResult> =>
    commit({
      tenant: current.tenant,
      proposal: {
        kind: 'update',
        expectedRevision: current.revision,
        expectedStatus: current.status,
        record: next,
      },
      ...parts,
    });

  const draft = (
    type: LedgerEventType,
    proposal: string | null,
    actionType: string | null,
    data: Record<string, JsonValue>,
    after?: { status: ProposalStatus; revision: number },
  ): LedgerEventDraft => ({
    proposal,
    type,
    at: iso(clock.now()),
    actionType,
    status: after?.status ?? null,
    revision: after?.revision ?? null,
    data,
  });

  const dueFor = (
    status: ProposalStatus,
    record: Pick<ProposalRecord, 'expiresAtMs'>,
    lease: ProposalRecord['lease'],
    verifyAtMs: number | null,
  ): number | null => {
    switch (status) {
      case 'awaiting_authority':
      case 'authorized':
        return record.expiresAtMs;
      case 'executing':
        return lease?.expiresAtMs ?? null;
      case 'failed_unknown':
      case 'verification_pending':
        return verifyAtMs;
      default:
        return null;
    }
  };

  /** A record's successor with the revision bumped and `dueAtMs` recomputed. */
  const successor = (
    previous: ProposalRecord,
    changes: Partial<Omit<ProposalRecord, 'revision' | 'tenant' | 'proposal'>>,
    verifyAtMs: number | null = null,
  ): ProposalRecord => {
    const merged = { ...previous, ...changes };
    return {
      ...merged,
      revision: previous.revision + 1,
      updatedAtMs: clock.now(),
      dueAtMs:
        changes.dueAtMs !== undefined
          ? changes.dueAtMs
          : dueFor(merged.status, merged, merged.lease, verifyAtMs),
    };
  };

  const after = (record: ProposalRecord) => ({ status: record.status, revision: record.revision });

  const resultOf = (
    record: ProposalRecord,
    outcome: Outcome = STATUS_OUTCOME[record.status],
    extra: Partial<GuardResult> = {},
  ): GuardResult => ({
    proposal: record.proposal,
    status: record.status,
    outcome,
    revision: record.revision,
    ...(record.reasonCode === null ? {} : { reasonCode: record.reasonCode }),
    semanticEffectKey: record.semanticEffectKey,
    result: { receipts: record.receipts, compensationReceipts: record.compensationReceipts },
    ...extra,
  });

  const load = async (
    action: ActionDefinition,
    address: ProposalAddress,
  ): Promise<ProposalRecord> => {
    checkAction(action);
    const tenant = checkArgument('tenant', address.tenant);
    const proposal = checkArgument('proposal', address.proposal);
    const record = await store.getProposal(tenant, proposal);
    if (record === undefined || record.tenant !== tenant || record.actionType !== action.typeName) {
      throw new ProposalNotFoundError(proposal);
    }
    return record;
  };

  const reload = async (record: ProposalRecord): Promise<ProposalRecord> => {
    const current = await store.getProposal(record.tenant, record.proposal);
    if (current === undefined) {
      throw new StoreInvariantError(
        'proposal_vanished',
        `Proposal ${record.proposal} disappeared from the ${store.kind} store`,
      );
    }
    return current;
  };

  const effectKeyOf = (
    tenant: string,
    action: ActionDefinition,
    input: Record<string, unknown>,
  ) => {
    const fields: Record<string, unknown> = {};
    for (const field of action.protectedFields) {
      if (input[field] !== undefined) fields[field] = input[field];
    }
    const digest = keyedDigest(
      keyRing,
      KeyPurpose.effect,
      keyRing.effectKey,
      'sideguard/semantic-effect/v1',
      {
        tenant,
        actionType: action.typeName,
        fields: fields as JsonValue,
      },
    );
    return `sek_${digest}`;
  };

  /** Stable across retries and restarts; new only per allowed resend (I5). */
  const providerKeyOf = (record: ProposalRecord, label = 'execute'): string =>
    `sg-${sha256Hex(`sideguard/provider-idempotency-key/v1\u0000${label}\u0000${record.effectScope}\u0000${record.resendGeneration}`).slice(0, 48)}`;

  const snapshotAad = (tenant: string, proposal: string): string =>
    `sideguard/snapshot/v1\u0000${tenant}\u0000${proposal}`;

  const commitmentPayload = (
    record: Pick<
      ProposalRecord,
      | 'tenant'
      | 'proposal'
      | 'actionType'
      | 'semanticEffectKey'
      | 'principal'
      | 'agent'
      | 'expiresAtMs'
    >,
    input: JsonValue,
    facts: JsonValue,
  ): JsonValue => ({
    tenant: record.tenant,
    proposal: record.proposal,
    actionType: record.actionType,
    semanticEffectKey: record.semanticEffectKey,
    principal: record.principal,
    agent: record.agent,
    expiresAtMs: record.expiresAtMs,
    input,
    facts,
  });

  /** Decrypts the snapshot and checks it still matches the commitment (execution boundary). */
  const openSnapshot = <A extends ActionDefinition>(
    action: A,
    record: ProposalRecord,
  ): { input: ActionInput<A>; preview: JsonValue | undefined; facts: JsonValue } => {
    if (record.snapshot === null) {
      throw new StoreInvariantError(
        'snapshot_missing',
        `Proposal ${record.proposal} has no snapshot (erased?) and cannot be used`,
      );
    }
    const opened = openEnvelope(
      keyRing,
      record.snapshot,
      snapshotAad(record.tenant, record.proposal),
    );
    const body = opened as { input?: JsonValue; preview?: JsonValue; facts?: JsonValue };
    if (
      body.input === undefined ||
      !verifyCommitment(
        keyRing,
        'sideguard/proposal/v1',
        commitmentPayload(record, body.input, body.facts ?? null),
        record.commitment,
      )
    ) {
      throw new StoreInvariantError(
        'commitment_mismatch',
        `Refused to use proposal ${record.proposal}: its stored snapshot does not match its commitment (the store was altered)`,
      );
    }
    const parsed = action.schema.safeParse(body.input);
    if (!parsed.success) {
      throw new StoreInvariantError(
        'snapshot_contract_mismatch',
        `Proposal ${record.proposal} no longer satisfies ${action.typeName}'s contract`,
      );
    }
    return {
      input: parsed.data as ActionInput<A>,
      preview: body.preview,
      facts: body.facts ?? null,
    };
  };

  const contextOf = (record: ProposalRecord): ExecuteContext => ({
    tenant: record.tenant,
    proposal: record.proposal,
    semanticEffectKey: record.semanticEffectKey,
    providerIdempotencyKey: providerKeyOf(record),
    resendGeneration: record.resendGeneration,
  });

  // ---------------------------------------------------------------- prepare

  const prepareInternal = async (
    action: ActionDefinition,
    options: PrepareOptions,
    link?: { readonly supersedes: string; readonly proposal: string },
  ): Promise<GuardResult> => {
    checkAction(action);
    const tenant = checkArgument('tenant', options.tenant);
    const principal = checkArgument('principal', options.principal);
    const agent = options.agent === undefined ? null : checkArgument('agent', options.agent);
    const mode = options.mode ?? 'commit';
    if (mode !== 'commit' && mode !== 'dry_run') {
      throw new ContractViolationError('invalid_argument', `mode must be 'commit' or 'dry_run'`);
    }
    const proposal = link?.proposal ?? ids.proposal();
    const typeName = action.typeName;

    const reject = async (issues: readonly ContractIssue[], reasonCode: string) => {
      await commit({
        tenant,
        events: [
          draft('contract_rejected', proposal, typeName, {
            reasonCode,
            mode,
            issues: issues.map((issue) => ({ ...issue })),
          }),
        ],
      });
      return {
        proposal,
        status: null,
        outcome: 'rejected' as const,
        revision: 0,
        reasonCode,
        issues,
      };
    };

    const parsed = action.schema.safeParse(options.input);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, MAX_ISSUES).map((issue) => ({
        path: shortText(issue.path.map(String).join('.'), 120) || '(root)',
        code: String(issue.code),
        message: shortText(issue.message),
      }));
      return reject(issues, 'contract_violation');
    }
    const input = parsed.data as Record<string, unknown>;
    let canonicalInput: string;
    try {
      canonicalInput = canonicalize(input);
    } catch (error) {
      const data = error instanceof SideguardError ? error.data : undefined;
      return reject(
        [
          {
            path: String(data?.path ?? '(root)'),
            code: 'canonical_json_invalid',
            message: shortText(error instanceof Error ? error.message : String(error)),
          },
        ],
        'canonical_json_invalid',
      );
    }
    let facts: JsonValue = null;
    if (options.facts !== undefined && options.facts !== null) {
      try {
        facts = JSON.parse(canonicalize(options.facts)) as JsonValue;
      } catch (error) {
        return reject(
          [
            {
              path: 'facts',
              code: 'canonical_json_invalid',
              message: shortText(error instanceof Error ? error.message : String(error)),
            },
          ],
          'canonical_json_invalid',
        );
      }
    }
    const factsJson = facts === null ? '' : canonicalize(facts);
    if (new TextEncoder().encode(canonicalInput + factsJson).byteLength > MAX_INPUT_BYTES) {
      return reject(
        [
          {
            path: '(root)',
            code: 'too_big',
            message: `input is larger than ${MAX_INPUT_BYTES} bytes of canonical JSON`,
          },
        ],
        'input_too_large',
      );
    }
    const semanticEffectKey = effectKeyOf(tenant, action, input);
    const effectScope = `${typeName}#${semanticEffectKey}`;
    let verdict: { decision: string; reason: string };
    try {
      verdict = action.config.policy(input, { tenant, principal, agent, mode, facts });
    } catch (error) {
      throw new SideguardError(
        'policy_failed',
        `The policy of ${typeName} threw: ${String(error)}`,
        {
          cause: error,
        },
      );
    }
    if (
      (verdict?.decision !== 'allow' &&
        verdict?.decision !== 'require_approval' &&
        verdict?.decision !== 'block') ||
      typeof verdict.reason !== 'string'
    ) {
      throw new ConfigurationError(
        'policy_result_invalid',
        `The policy of ${typeName} must return { decision: 'allow' | 'require_approval' | 'block', reason: string }`,
      );
    }
    const decision = verdict.decision;
    const reasonCode = shortText(verdict.reason, 120);
    if (decision === 'require_approval' && action.approval === undefined) {
      throw new ConfigurationError(
        'approval_rule_missing',
        `The policy of ${typeName} required approval, but the action declares no approval rule`,
      );
    }

    const existing = (await store.listProposalsByEffect(tenant, effectScope)).find(
      (record) =>
        !EFFECT_RELEASED_STATUSES.has(record.status) && record.proposal !== link?.supersedes,
    );
    const initialStatus: ProposalStatus =
      decision === 'block' ? 'blocked' : decision === 'allow' ? 'authorized' : 'awaiting_authority';

    if (mode === 'dry_run') {
      const prediction: DryRunPrediction = existing
        ? { wouldBe: 'replayed', wouldWrite: false, semanticEffectKey, replayOf: existing.proposal }
        : { wouldBe: initialStatus, wouldWrite: initialStatus !== 'blocked', semanticEffectKey };
      await commit({
        tenant,
        events: [
          draft('dry_run_predicted', proposal, typeName, {
            policyDecision: decision,
            reasonCode,
            semanticEffectKey,
            wouldBe: prediction.wouldBe,
            wouldWrite: prediction.wouldWrite,
            ...(existing ? { replayOf: existing.proposal } : {}),
          }),
        ],
      });
      const preview = action.config.preview?.(input as never);
      return {
        proposal,
        status: null,
        outcome: 'dry_run_predicted',
        revision: 0,
        reasonCode,
        semanticEffectKey,
        prediction,
        ...(preview === undefined ? {} : { preview }),
      };
    }

    if (existing !== undefined) {
      const events = await commit({
        tenant,
        events: [
          draft('retry_resolved', existing.proposal, typeName, {
            reasonCode: 'semantic_effect_exists',
            attemptedProposal: proposal,
            semanticEffectKey,
            existingStatus: existing.status,
          }),
        ],
      });
      void events;
      return resultOf(existing, 'replayed', { reasonCode: 'semantic_effect_exists' });
    }

    const now = clock.now();
    const preview = action.config.preview?.(input as never);
    const base = {
      tenant,
      proposal,
      actionType: typeName,
      semanticEffectKey,
      principal,
      agent,
      expiresAtMs: now + action.proposalTtlMs,
    };
    const inputJson = JSON.parse(canonicalInput) as JsonValue;
    const record: ProposalRecord = {
      ...base,
      revision: 1,
      status: initialStatus,
      effectScope,
      createdAtMs: now,
      updatedAtMs: now,
      dueAtMs: initialStatus === 'blocked' ? null : base.expiresAtMs,
      commitment: computeCommitment(
        keyRing,
        'sideguard/proposal/v1',
        commitmentPayload(base, inputJson, facts),
      ),
      snapshot: sealEnvelope(
        keyRing,
        {
          input: inputJson,
          ...(facts === null ? {} : { facts }),
          ...(preview === undefined ? {} : { preview }),
        },
        snapshotAad(tenant, proposal),
        randomBytes,
      ),
      policy: { decision, reasonCode },
      reasonCode,
      lease: null,
      resendGeneration: 0,
      verificationAttempts: 0,
      receipts: [],
      compensationReceipts: [],
      supersededBy: null,
      supersedes: link?.supersedes ?? null,
    };
    const stamp = after(record);
    const events: LedgerEventDraft[] = [
      draft('contract_validated', proposal, typeName, {
        protectedFields: [...action.protectedFields],
        ...(link ? { supersedes: link.supersedes } : {}),
      }),
      draft('policy_decided', proposal, typeName, {
        decision,
        reasonCode,
        ...(facts === null ? {} : { factsDigest: sha256Hex(factsJson) }),
      }),
      draft(
        'idempotency_decided',
        proposal,
        typeName,
        { decision: 'new_effect', semanticEffectKey, reasonCode },
        stamp,
      ),
    ];
    const written = await commit({ tenant, proposal: { kind: 'insert', record }, events });
    if (written.kind !== 'committed') {
      throw new StoreInvariantError(
        'proposal_id_collision',
        `The ${store.kind} store refused new proposal ${proposal} (${written.kind}); ids must be unique`,
      );
    }
    return resultOf(record, STATUS_OUTCOME[initialStatus], {
      reasonCode,
      ...(preview === undefined ? {} : { preview }),
    });
  };

  // ---------------------------------------------------------------- authority

  const recordAuthority = async (
    action: ActionDefinition,
    options: RecordAuthorityOptions,
  ): Promise<GuardResult> => {
    checkAction(action);
    const tenant = checkArgument('tenant', options.tenant);
    const authenticated = checkArgument('authenticatedAuthority', options.authenticatedAuthority);
    const raw = options.evidence as { proposal?: unknown } | null | undefined;
    const proposalId = typeof raw === 'object' && raw !== null ? raw.proposal : undefined;
    if (typeof proposalId !== 'string') {
      throw new AuthorityEvidenceError(
        'evidence_malformed',
        'Failed to record authority: evidence must be an object naming its proposal',
      );
    }
    let record = await load(action, { tenant, proposal: proposalId });
    const rejectWith = async (code: string, detail: string) => {
      await commit({
        tenant,
        events: [
          draft('authority_rejected', record.proposal, action.typeName, {
            reasonCode: code,
            authority: shortText(authenticated, 120),
          }),
        ],
      });
      return resultOf(record, 'rejected', {
        reasonCode: code,
        issues: [{ path: '(evidence)', code, message: detail }],
      });
    };
    const parsed = authorityEvidenceSchema.safeParse(options.evidence);
    if (!parsed.success) {
      return rejectWith(
        'evidence_malformed',
        `evidence is malformed: ${shortText(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))}`,
      );
    }
    const evidence = parsed.data as AuthorityEvidence;
    const digest = evidenceDigest(evidence);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const now = clock.now();
      const problem = checkEvidence(evidence, {
        tenant,
        record,
        audience,
        rule: action.approval,
        authenticatedAuthority: authenticated,
        nowMs: now,
      });
      if (problem !== undefined) return rejectWith(problem.code, problem.message);
      const stored = await store.listEvidence(tenant, record.proposal);
      if (stored.some((e) => e.evidenceDigest === digest)) {
        return resultOf(record, 'replayed', { reasonCode: 'evidence_already_recorded' });
      }
      if (record.status !== 'awaiting_authority' && record.status !== 'authorized') {
        return resultOf(record);
      }
      if (now >= record.expiresAtMs) return expire(action, record);
      const evidenceRecord = {
        tenant,
        proposal: record.proposal,
        evidenceDigest: digest,
        authority: evidence.authority,
        decision: evidence.decision,
        channelAssurance: evidence.channelAssurance,
        issuedAtMs: Date.parse(evidence.issuedAt),
        expiresAtMs: Date.parse(evidence.expiresAt),
        recordedAtMs: now,
        evidence: evidence as unknown as JsonValue,
      };
      const rule = action.approval;
      if (rule === undefined) return rejectWith('approval_not_required', 'no approval rule');
      const tally = tallyAuthority(rule, [...stored, evidenceRecord], now);
      let status: ProposalStatus = record.status;
      let reasonCode: string | null = record.reasonCode;
      if (tally.kind === 'vetoed') {
        status = 'denied';
        reasonCode = 'rejected_by_authority';
      } else if (tally.kind === 'satisfied' && record.policy.decision === 'require_approval') {
        status = 'authorized';
        reasonCode = 'authority_satisfied';
      }
      const next = successor(record, { status, reasonCode });
      const events: LedgerEventDraft[] = [
        draft(
          'authority_recorded',
          record.proposal,
          action.typeName,
          {
            authority: evidence.authority,
            decision: evidence.decision,
            channelAssurance: evidence.channelAssurance,
            evidenceDigest: digest,
            expiresAt: evidence.expiresAt,
            approvals: tally.kind === 'vetoed' ? 0 : tally.approvers.length,
            required: rule.required,
          },
          status === record.status ? after(next) : undefined,
        ),
      ];
      if (status === 'denied') {
        events.push(
          draft(
            'denied',
            record.proposal,
            action.typeName,
            { reasonCode: 'rejected_by_authority', authority: evidence.authority },
            after(next),
          ),
        );
      } else if (status !== record.status) {
        events.push(
          draft(
            'authority_satisfied',
            record.proposal,
            action.typeName,
            {
              reasonCode: 'authority_satisfied',
              approvers: tally.kind === 'satisfied' ? [...tally.approvers] : [],
            },
            after(next),
          ),
        );
      }
      const written = await commit({
        tenant,
        proposal: {
          kind: 'update',
          expectedRevision: record.revision,
          expectedStatus: record.status,
          record: next,
        },
        evidence: [evidenceRecord],
        events,
      });
      if (written.kind === 'committed') {
        return resultOf(
          next,
          status === record.status && status === 'awaiting_authority'
            ? 'authority_pending'
            : STATUS_OUTCOME[status],
        );
      }
      record = await reload(record);
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  // ---------------------------------------------------------------- expiry

  const expire = async (action: ActionDefinition, record: ProposalRecord): Promise<GuardResult> => {
    const next = successor(record, {
      status: 'expired',
      reasonCode: 'proposal_expired',
      lease: null,
    });
    const written = await update(record, next, {
      events: [
        draft(
          'expired',
          record.proposal,
          action.typeName,
          { reasonCode: 'proposal_expired' },
          after(next),
        ),
      ],
    });
    if (written.kind === 'committed') return resultOf(next);
    return resultOf(await reload(record));
  };

  const expireDue = async (
    action: ActionDefinition,
    address: ProposalAddress,
  ): Promise<GuardResult> => {
    const record = await load(action, address);
    if (
      (record.status === 'awaiting_authority' || record.status === 'authorized') &&
      clock.now() >= record.expiresAtMs
    ) {
      return expire(action, record);
    }
    return resultOf(record);
  };

  // ---------------------------------------------------------------- execute

  /** Records a result against the lease we hold, or as a late observation if we lost it. */
  const recordLeased = async (
    action: ActionDefinition,
    held: ProposalRecord,
    next: ProposalRecord,
    events: LedgerEventDraft[],
    lateData: Record<string, JsonValue>,
  ): Promise<GuardResult> => {
    const written = await update(held, next, {
      events,
    });
    if (written.kind === 'committed') return resultOf(next);
    // Someone took over after our lease expired: keep the evidence, change nothing else.
    await commit({
      tenant: held.tenant,
      events: [
        draft('late_result_observed', held.proposal, action.typeName, {
          reasonCode: 'lease_lost',
          ...lateData,
        }),
      ],
    });
    return resultOf(await reload(held));
  };

  const normaliseExecuteResult = (value: unknown): ExecuteResult => {
    const result = value as ExecuteResult | undefined;
    switch (result?.kind) {
      case 'accepted': {
        const receipt = cleanReceipt(result.receipt);
        return receipt
          ? { kind: 'accepted', receipt }
          : { kind: 'failed_unknown', reason: 'executor_receipt_invalid' };
      }
      case 'failed_known':
      case 'failed_unknown':
        return {
          kind: result.kind,
          reason: shortText(String(result.reason ?? 'unspecified'), 120),
        };
      case 'partial':
        if (Array.isArray(result.items) && result.items.length > 0) {
          return {
            kind: 'partial',
            items: result.items.map((item) => {
              const receipt = cleanReceipt(item?.receipt);
              const outcome =
                item?.outcome === 'committed' || item?.outcome === 'failed'
                  ? item.outcome
                  : 'unknown';
              return {
                step: shortText(String(item?.step ?? 'step'), 64),
                outcome: outcome === 'committed' && receipt === undefined ? 'unknown' : outcome,
                ...(receipt ? { receipt } : {}),
                ...(item?.reason ? { reason: shortText(String(item.reason), 120) } : {}),
              };
            }),
          };
        }
        return { kind: 'failed_unknown', reason: 'executor_result_invalid' };
      default:
        return { kind: 'failed_unknown', reason: 'executor_result_invalid' };
    }
  };

  const normaliseVerifyResult = (value: unknown): VerifyResult => {
    const result = value as VerifyResult | undefined;
    if (result?.kind === 'present') {
      const receipt = cleanReceipt(result.receipt);
      return receipt
        ? { kind: 'present', receipt }
        : { kind: 'unknown', reason: 'verifier_receipt_invalid' };
    }
    if (result?.kind === 'absent') return { kind: 'absent', final: result.final === true };
    return {
      kind: 'unknown',
      reason: shortText(String((result as { reason?: unknown })?.reason ?? 'unknown'), 120),
    };
  };

  const addReceipt = (receipts: readonly Receipt[], receipt: Receipt): Receipt[] =>
    receipts.some((r) => r.id === receipt.id && r.provider === receipt.provider)
      ? [...receipts]
      : [...receipts, receipt];

  const callVerify = async <A extends ActionDefinition>(
    action: A,
    input: ActionInput<A>,
    record: ProposalRecord,
    attempt: number,
  ): Promise<VerifyResult> => {
    try {
      return normaliseVerifyResult(
        await action.config.verify(input as never, {
          ...contextOf(record),
          receipts: record.receipts,
          attempt,
        }),
      );
    } catch (error) {
      return { kind: 'unknown', reason: `verifier_threw${errorTag(error)}` };
    }
  };

  const execute = async (
    action: ActionDefinition,
    address: ProposalAddress,
  ): Promise<GuardResult> => {
    let record = await load(action, address);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (record.status === 'verified')
        return resultOf(record, 'replayed', { reasonCode: 'already_verified' });
      if (record.status === 'stale' && record.supersededBy !== null) {
        return resultOf(record, 'stale', { freshProposal: record.supersededBy });
      }
      if (record.status !== 'authorized') return resultOf(record);
      const now = clock.now();
      if (now >= record.expiresAtMs) return expire(action, record);
      const { input, facts } = openSnapshot(action, record);

      if (record.policy.decision === 'require_approval') {
        const rule = action.approval;
        if (rule === undefined) {
          throw new ConfigurationError(
            'approval_rule_missing',
            `${action.typeName} has no approval rule`,
          );
        }
        const tally = tallyAuthority(
          rule,
          await store.listEvidence(record.tenant, record.proposal),
          now,
        );
        if (tally.kind !== 'satisfied') {
          const status: ProposalStatus = tally.kind === 'vetoed' ? 'denied' : 'awaiting_authority';
          const reasonCode = tally.kind === 'vetoed' ? 'rejected_by_authority' : 'authority_lapsed';
          const next = successor(record, { status, reasonCode });
          const written = await update(record, next, {
            events: [
              draft(
                tally.kind === 'vetoed' ? 'denied' : 'authority_lapsed',
                record.proposal,
                action.typeName,
                { reasonCode },
                after(next),
              ),
            ],
          });
          if (written.kind === 'committed') return resultOf(next);
          record = await reload(record);
          continue;
        }
      }

      if (action.config.resolve !== undefined) {
        let resolved: Awaited<ReturnType<NonNullable<typeof action.config.resolve>>>;
        try {
          resolved = await action.config.resolve(input as never, contextOf(record));
        } catch (error) {
          throw new SideguardError(
            'resolve_failed',
            `Failed to execute ${record.proposal}: the drift check (resolve) of ${action.typeName} threw, so nothing was claimed or sent; execute again when it can answer (${shortText(String(error), 200)})`,
            { cause: error, data: { proposal: record.proposal } },
          );
        }
        if (resolved?.kind === 'drifted') {
          const freshId = ids.proposal();
          const reasonCode = shortText(String(resolved.reason ?? 'drift'), 120);
          const next = successor(record, {
            status: 'stale',
            reasonCode,
            supersededBy: freshId,
            lease: null,
          });
          const written = await update(record, next, {
            events: [
              draft(
                'drift_detected',
                record.proposal,
                action.typeName,
                { reasonCode, freshProposal: freshId },
                after(next),
              ),
            ],
          });
          if (written.kind !== 'committed') {
            record = await reload(record);
            continue;
          }
          const fresh = await prepareInternal(
            action,
            {
              tenant: record.tenant,
              input: resolved.input ?? input,
              facts: resolved.facts ?? facts,
              principal: record.principal,
              ...(record.agent === null ? {} : { agent: record.agent }),
            },
            { supersedes: record.proposal, proposal: freshId },
          );
          return resultOf(next, 'stale', { freshProposal: fresh.proposal });
        }
      }

      const lease = { owner: ids.lease(), expiresAtMs: now + action.executionLeaseMs };
      const claimed = successor(record, { status: 'executing', lease, reasonCode: null });
      const providerIdempotencyKey = providerKeyOf(record);
      const written = await update(record, claimed, {
        claim: { effectScope: record.effectScope, proposal: record.proposal, atMs: now },
        events: [
          draft(
            'commit_started',
            record.proposal,
            action.typeName,
            {
              providerIdempotencyKey,
              resendGeneration: record.resendGeneration,
              leaseExpiresAt: iso(lease.expiresAtMs),
            },
            after(claimed),
          ),
        ],
      });
      if (written.kind === 'revision_conflict') {
        record = written.current ?? (await reload(record));
        continue;
      }
      if (written.kind === 'effect_claimed') {
        return supersedeByOwner(action, record, written.owner);
      }
      if (written.kind !== 'committed') {
        throw new StoreInvariantError(
          'unexpected_commit_result',
          `Unexpected ${written.kind} while claiming`,
        );
      }
      return runExecutor(action, claimed, input);
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  const supersedeByOwner = async (
    action: ActionDefinition,
    record: ProposalRecord,
    owner: string,
  ): Promise<GuardResult> => {
    let current = record;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (current.status !== 'authorized' && current.status !== 'awaiting_authority') break;
      const next = successor(current, {
        status: 'superseded',
        reasonCode: 'semantic_effect_claimed',
        supersededBy: owner,
      });
      const written = await update(current, next, {
        events: [
          draft(
            'superseded',
            current.proposal,
            action.typeName,
            { reasonCode: 'semantic_effect_claimed', owner },
            after(next),
          ),
        ],
      });
      if (written.kind === 'committed') break;
      current = await reload(current);
    }
    const ownerRecord = await store.getProposal(record.tenant, owner);
    if (ownerRecord === undefined) {
      throw new StoreInvariantError(
        'claim_owner_missing',
        `Effect claim owner ${owner} does not exist`,
      );
    }
    return resultOf(ownerRecord, 'replayed', { reasonCode: 'semantic_effect_claimed' });
  };

  const runExecutor = async <A extends ActionDefinition>(
    action: A,
    claimed: ProposalRecord,
    input: ActionInput<A>,
  ): Promise<GuardResult> => {
    let outcome: ExecuteResult;
    try {
      outcome = normaliseExecuteResult(
        await action.config.execute(input as never, contextOf(claimed)),
      );
    } catch (error) {
      outcome = {
        kind: 'failed_unknown',
        reason: `executor_threw${errorTag(error)}`,
      };
    }
    const type = action.typeName;
    const id = claimed.proposal;
    const now = clock.now();
    const settleAtMs = now + action.verificationDelayMs;

    switch (outcome.kind) {
      case 'accepted': {
        const receipts = addReceipt(claimed.receipts, outcome.receipt);
        const events: LedgerEventDraft[] = [
          draft('committed', id, type, { receipt: receiptData(outcome.receipt) }),
        ];
        // Confirm a presence at once: the settling window only delays trusting an absence.
        const verified = await callVerify(action, input, { ...claimed, receipts }, 1);
        events.push(draft('verification_observed', id, type, verificationData(verified, 1)));
        const next =
          verified.kind === 'present'
            ? successor(claimed, {
                status: 'verified',
                reasonCode: 'provider_confirmed',
                lease: null,
                verificationAttempts: 1,
                receipts: addReceipt(receipts, verified.receipt),
              })
            : successor(
                claimed,
                {
                  status: 'verification_pending',
                  reasonCode: 'provider_not_yet_confirmed',
                  lease: null,
                  verificationAttempts: 1,
                  receipts,
                },
                settleAtMs,
              );
        stampLast(events, next);
        return recordLeased(action, claimed, next, events, {
          receipt: receiptData(outcome.receipt),
        });
      }
      case 'failed_known': {
        const next = successor(claimed, {
          status: 'failed_known',
          reasonCode: outcome.reason,
          lease: null,
        });
        return recordLeased(
          action,
          claimed,
          next,
          [draft('commit_failed', id, type, { reasonCode: outcome.reason }, after(next))],
          { reasonCode: outcome.reason },
        );
      }
      case 'failed_unknown': {
        const next = successor(
          claimed,
          { status: 'failed_unknown', reasonCode: outcome.reason, lease: null },
          settleAtMs,
        );
        const recorded = await recordLeased(
          action,
          claimed,
          next,
          [draft('commit_outcome_unknown', id, type, { reasonCode: outcome.reason }, after(next))],
          { reasonCode: outcome.reason },
        );
        if (recorded.status === 'failed_unknown' && action.verificationDelayMs === 0) {
          return verifyStep(action, await reload(claimed), false);
        }
        return recorded;
      }
      case 'partial': {
        const committed = outcome.items.filter((item) => item.outcome === 'committed');
        const unknown = outcome.items.some((item) => item.outcome === 'unknown');
        let receipts = [...claimed.receipts];
        for (const item of committed)
          if (item.receipt) receipts = addReceipt(receipts, item.receipt);
        const itemsData = outcome.items.map((item) => ({
          step: item.step,
          outcome: item.outcome,
          ...(item.receipt ? { receipt: receiptData(item.receipt) } : {}),
          ...(item.reason ? { reason: item.reason } : {}),
        }));
        let status: ProposalStatus;
        let reasonCode: string;
        if (committed.length === outcome.items.length) {
          status =
            action.verificationDelayMs === 0 ? 'verification_pending' : 'verification_pending';
          reasonCode = 'all_steps_committed';
        } else if (committed.length === 0) {
          status = unknown ? 'failed_unknown' : 'failed_known';
          reasonCode = unknown ? 'steps_outcome_unknown' : 'all_steps_failed';
        } else if (action.effectKind === 'itemized') {
          status = 'partially_succeeded';
          reasonCode = 'some_steps_failed';
        } else {
          status = 'compensation_required';
          reasonCode = 'later_step_failed';
        }
        const next = successor(claimed, { status, reasonCode, lease: null, receipts }, settleAtMs);
        const events: LedgerEventDraft[] = [
          draft('partial_commit', id, type, { reasonCode, items: itemsData }),
        ];
        if (status === 'compensation_required') {
          events.push(
            draft('compensation_required', id, type, {
              reasonCode,
              receipts: receipts.map(receiptData),
            }),
          );
        }
        stampLast(events, next);
        const recorded = await recordLeased(action, claimed, next, events, { items: itemsData });
        // All steps committed: confirm at once, as for an accepted write.
        if (recorded.status === 'verification_pending') {
          return verifyStep(action, await reload(claimed), true);
        }
        if (recorded.status === 'failed_unknown' && action.verificationDelayMs === 0) {
          return verifyStep(action, await reload(claimed), false);
        }
        return recorded;
      }
    }
  };

  /** Marks the last draft with the status and revision the commit leaves behind. */
  const stampLast = (events: LedgerEventDraft[], next: ProposalRecord): void => {
    const last = events.pop();
    if (last !== undefined) events.push({ ...last, status: next.status, revision: next.revision });
  };

  const verificationData = (result: VerifyResult, attempt: number): Record<string, JsonValue> => {
    switch (result.kind) {
      case 'present':
        return { result: 'present', attempt, receipt: receiptData(result.receipt) };
      case 'absent':
        return { result: 'absent', final: result.final, attempt };
      case 'unknown':
        return { result: 'unknown', attempt, reasonCode: result.reason ?? 'unknown' };
    }
  };

  // ---------------------------------------------------------------- verification

  const commitStartedAtMs = async (record: ProposalRecord): Promise<number | undefined> => {
    const events = await store.readLedger({ tenant: record.tenant, proposal: record.proposal });
    const started = events.filter((event) => event.type === 'commit_started').at(-1);
    return started === undefined ? undefined : Date.parse(started.at);
  };

  /** One verification attempt under a lease. `force` ignores the due time (and resumes unresolved). */
  const verifyStep = async (
    action: ActionDefinition,
    start: ProposalRecord,
    force: boolean,
  ): Promise<GuardResult> => {
    let record = start;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (!VERIFIABLE.has(record.status)) return resultOf(record);
      if (record.status === 'verification_unresolved' && !force) return resultOf(record);
      const now = clock.now();
      if (record.lease !== null && record.lease.expiresAtMs > now) {
        return resultOf(record, 'in_progress', { reasonCode: 'verification_in_progress' });
      }
      if (!force && record.dueAtMs !== null && record.dueAtMs > now) return resultOf(record);
      const lease = { owner: ids.lease(), expiresAtMs: now + action.executionLeaseMs };
      const leased = successor(record, { lease, dueAtMs: lease.expiresAtMs });
      const number =
        record.status === 'verification_unresolved'
          ? action.maxVerificationAttempts
          : record.verificationAttempts;
      const taken = await update(record, leased, {
        events: [
          draft(
            'verification_started',
            record.proposal,
            action.typeName,
            { attempt: number + 1 },
            after(leased),
          ),
        ],
      });
      if (taken.kind !== 'committed') {
        record = await reload(record);
        continue;
      }
      const { input } = openSnapshot(action, leased);
      const attemptNumber = number + 1;
      const verified = await callVerify(action, input, leased, attemptNumber);
      const events: LedgerEventDraft[] = [
        draft(
          'verification_observed',
          leased.proposal,
          action.typeName,
          verificationData(verified, attemptNumber),
        ),
      ];
      const after2 = clock.now();
      let next: ProposalRecord;
      if (verified.kind === 'present') {
        next = successor(leased, {
          status: 'verified',
          reasonCode: 'provider_confirmed',
          lease: null,
          verificationAttempts: attemptNumber,
          receipts: addReceipt(leased.receipts, verified.receipt),
        });
      } else {
        const settled =
          verified.kind === 'absent' && verified.final
            ? ((await commitStartedAtMs(leased)) ?? Number.POSITIVE_INFINITY) +
                action.verificationDelayMs <=
              after2
            : false;
        if (settled && action.allowResendAfterFinalAbsence) {
          next = successor(leased, {
            status: 'authorized',
            reasonCode: 'provider_reports_absent',
            lease: null,
            verificationAttempts: 0,
            resendGeneration: leased.resendGeneration + 1,
          });
          events.push(
            draft('resend_allowed', leased.proposal, action.typeName, {
              reasonCode: 'provider_reports_absent',
              resendGeneration: leased.resendGeneration + 1,
            }),
          );
          stampLast(events, next);
          const recorded = await recordLeased(action, leased, next, events, {});
          return recorded.status === 'authorized'
            ? { ...recorded, outcome: 'resend_allowed' }
            : recorded;
        }
        const exhausted = attemptNumber >= action.maxVerificationAttempts;
        if (settled || exhausted) {
          const reasonCode = settled
            ? 'absent_but_resend_not_declared'
            : 'verification_attempts_exhausted';
          next = successor(leased, {
            status: 'verification_unresolved',
            reasonCode,
            lease: null,
            verificationAttempts: attemptNumber,
          });
          events.push(
            draft('verification_unresolved', leased.proposal, action.typeName, {
              reasonCode,
              attempts: attemptNumber,
            }),
          );
        } else {
          next = successor(
            leased,
            {
              status: 'verification_pending',
              reasonCode: 'awaiting_provider_confirmation',
              lease: null,
              verificationAttempts: attemptNumber,
            },
            after2 + Math.max(action.verificationDelayMs, 1),
          );
        }
      }
      stampLast(events, next);
      return recordLeased(action, leased, next, events, {});
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  const reconcileRecord = async (
    action: ActionDefinition,
    start: ProposalRecord,
  ): Promise<GuardResult> => {
    let record = start;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const now = clock.now();
      if (record.status === 'executing') {
        if (record.lease !== null && record.lease.expiresAtMs > now) return resultOf(record);
        // The executor died or hung past its lease: its write may or may not have happened.
        const next = successor(
          record,
          { status: 'failed_unknown', reasonCode: 'execution_lease_expired', lease: null },
          now,
        );
        const written = await update(record, next, {
          events: [
            draft(
              'lease_expired',
              record.proposal,
              action.typeName,
              { reasonCode: 'execution_lease_expired' },
              after(next),
            ),
          ],
        });
        record = written.kind === 'committed' ? next : await reload(record);
        continue;
      }
      if (
        (record.status === 'awaiting_authority' || record.status === 'authorized') &&
        now >= record.expiresAtMs
      ) {
        return expire(action, record);
      }
      if (VERIFIABLE.has(record.status)) return verifyStep(action, record, false);
      return resultOf(record);
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  // ---------------------------------------------------------------- compensation

  const compensate = async (
    action: ActionDefinition,
    address: ProposalAddress,
  ): Promise<GuardResult> => {
    let record = await load(action, address);
    const handler = action.config.compensate;
    if (handler === undefined) {
      throw new ConfigurationError(
        'compensation_not_declared',
        `Failed to compensate: ${action.typeName} declares no compensate function`,
      );
    }
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (record.status === 'compensated')
        return resultOf(record, 'replayed', { reasonCode: 'already_compensated' });
      if (record.status !== 'compensation_required' && record.status !== 'partially_succeeded') {
        return resultOf(record);
      }
      const now = clock.now();
      if (record.lease !== null && record.lease.expiresAtMs > now) {
        return resultOf(record, 'in_progress', { reasonCode: 'compensation_in_progress' });
      }
      const lease = { owner: ids.lease(), expiresAtMs: now + action.executionLeaseMs };
      const leased = successor(record, { lease });
      const compensationIdempotencyKey = providerKeyOf(record, 'compensate');
      const taken = await update(record, leased, {
        events: [
          draft(
            'compensation_started',
            record.proposal,
            action.typeName,
            { compensationIdempotencyKey },
            after(leased),
          ),
        ],
      });
      if (taken.kind !== 'committed') {
        record = await reload(record);
        continue;
      }
      const { input } = openSnapshot(action, leased);
      let result: { kind: 'compensated'; receipt: Receipt } | { kind: 'failed'; reason: string };
      try {
        const raw = await handler(input as never, {
          ...contextOf(leased),
          receipts: leased.receipts,
          compensationIdempotencyKey,
        });
        const receipt = raw?.kind === 'compensated' ? cleanReceipt(raw.receipt) : undefined;
        result = receipt
          ? { kind: 'compensated', receipt }
          : {
              kind: 'failed',
              reason: shortText(
                String((raw as { reason?: unknown })?.reason ?? 'compensation_result_invalid'),
                120,
              ),
            };
      } catch (error) {
        result = { kind: 'failed', reason: `compensator_threw${errorTag(error)}` };
      }
      if (result.kind === 'compensated') {
        const next = successor(leased, {
          status: 'compensated',
          reasonCode: 'compensated',
          lease: null,
          compensationReceipts: addReceipt(leased.compensationReceipts, result.receipt),
        });
        return recordLeased(
          action,
          leased,
          next,
          [
            draft(
              'compensated',
              leased.proposal,
              action.typeName,
              { receipt: receiptData(result.receipt) },
              after(next),
            ),
          ],
          { receipt: receiptData(result.receipt) },
        );
      }
      const next = successor(leased, { reasonCode: result.reason, lease: null });
      return recordLeased(
        action,
        leased,
        next,
        [
          draft(
            'compensation_failed',
            leased.proposal,
            action.typeName,
            { reasonCode: result.reason },
            after(next),
          ),
        ],
        { reasonCode: result.reason },
      );
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  // ---------------------------------------------------------------- read and erase

  const mayRead = (action: ActionDefinition, record: ProposalRecord, reader: string): boolean =>
    reader === record.principal ||
    (action.approval?.authorities.some((authority) => authority.id === reader) ?? false) ||
    (action.config.readers?.includes(reader) ?? false);

  const loadForReader = async (
    action: ActionDefinition,
    address: ReaderAddress,
  ): Promise<ProposalRecord> => {
    const reader = checkArgument('reader', address.reader);
    const record = await load(action, address);
    if (!mayRead(action, record, reader)) throw new ProposalNotFoundError(address.proposal);
    return record;
  };

  const read = async (action: ActionDefinition, address: ReaderAddress): Promise<ProposalView> => {
    const record = await loadForReader(action, address);
    const opened = record.snapshot === null ? undefined : openSnapshot(action, record);
    const rule = action.approval;
    const tally =
      rule === undefined
        ? undefined
        : tallyAuthority(
            rule,
            await store.listEvidence(record.tenant, record.proposal),
            clock.now(),
          );
    return {
      ...resultOf(record),
      tenant: record.tenant,
      actionType: record.actionType,
      principal: record.principal,
      agent: record.agent,
      createdAt: iso(record.createdAtMs),
      expiresAt: iso(record.expiresAtMs),
      ...(opened === undefined
        ? {}
        : {
            input: opened.input as JsonValue,
            facts: opened.facts,
            ...(opened.preview === undefined ? {} : { preview: opened.preview }),
            evidenceBindings: {
              tenant: record.tenant,
              actionType: record.actionType,
              proposal: record.proposal,
              semanticEffectKey: record.semanticEffectKey,
              proposalCommitment: record.commitment,
              audience,
              proposalExpiresAt: iso(record.expiresAtMs),
            },
          }),
      authority: {
        required: record.policy.decision === 'require_approval' ? (rule?.required ?? 0) : 0,
        approvers: tally?.kind === 'vetoed' ? [] : [...(tally?.approvers ?? [])],
        rejectedBy: tally?.kind === 'vetoed' ? tally.rejectedBy : null,
      },
      supersededBy: record.supersededBy,
      supersedes: record.supersedes,
    };
  };

  const erase = async (action: ActionDefinition, address: ReaderAddress): Promise<GuardResult> => {
    let record = await loadForReader(action, address);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (record.status === 'erased')
        return resultOf(record, 'erased', { reasonCode: 'already_erased' });
      // In-flight proposals keep their input: verification and compensation still need it.
      if (!isAllowedTransition(record.status, 'erased')) {
        return resultOf(record, 'conflict', { reasonCode: 'erasure_blocked_in_flight' });
      }
      const next = successor(record, {
        status: 'erased',
        reasonCode: 'erased_on_request',
        lease: null,
        dueAtMs: null,
        snapshot: null,
      });
      const written = await update(record, next, {
        events: [
          draft(
            'erased',
            record.proposal,
            action.typeName,
            {
              reasonCode: 'erased_on_request',
              previousStatus: record.status,
              requestedBy: shortText(address.reader, 120),
            },
            after(next),
          ),
        ],
      });
      if (written.kind === 'committed') return resultOf(next, 'erased');
      record = await reload(record);
    }
    return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
  };

  // ---------------------------------------------------------------- public surface

  return {
    prepare: (action, options) => prepareInternal(action, options),
    recordAuthority,
    execute,
    reconcile: async (action, address) => reconcileRecord(action, await load(action, address)),
    resumeVerification: async (action, address) => {
      const record = await load(action, address);
      if (record.status === 'executing') return reconcileRecord(action, record);
      return verifyStep(action, record, true);
    },
    compensate,
    expireDue,
    sweep: async (action, options) => {
      checkAction(action);
      const tenant = checkArgument('tenant', options.tenant);
      const due = await store.listDue({
        tenant,
        statuses: [
          'awaiting_authority',
          'authorized',
          'executing',
          'failed_unknown',
          'verification_pending',
        ],
        dueAtOrBeforeMs: clock.now(),
        limit: options.limit ?? 100,
      });
      const results: GuardResult[] = [];
      for (const record of due) {
        if (record.actionType !== action.typeName) continue;
        results.push(await reconcileRecord(action, record));
      }
      return results;
    },
    read,
    erase,
    run: async (action, options) => {
      const prepared = await prepareInternal(action, { ...options, mode: 'commit' });
      if (prepared.status === 'authorized') {
        return execute(action, { tenant: options.tenant, proposal: prepared.proposal });
      }
      return prepared;
    },
    exportLedger: async ({ tenant }) =>
      ledgerToJsonl(await store.readLedger({ tenant: checkArgument('tenant', tenant) })),
    verifyLedger: async ({ tenant }) => {
      checkArgument('tenant', tenant);
      const checkpoint = await store.ledgerCheckpoint(tenant);
      const verdict = verifyLedgerChain(
        await store.readLedger({ tenant }),
        checkpoint === undefined ? {} : { from: checkpoint },
      );
      if (verdict.kind === 'invalid') return verdict;
      // The chain can only prove what it holds: compare its end with the head the store kept,
      // so removing the newest entries is detected too.
      const head = await store.ledgerHead(tenant);
      if (head?.sequence !== verdict.head?.sequence || head?.hash !== verdict.head?.hash) {
        return {
          kind: 'invalid',
          index: verdict.count,
          sequence: verdict.head?.sequence ?? null,
          reason: 'head_mismatch',
          message: `the chain ends at sequence ${verdict.head?.sequence ?? 0} but the store's head is sequence ${head?.sequence ?? 0} (entries were removed from the end)`,
        };
      }
      return verdict;
    },
    replay: async ({ tenant, proposal }) =>
      replayProposal(
        await store.readLedger({
          tenant: checkArgument('tenant', tenant),
          proposal: checkArgument('proposal', proposal),
        }),
        proposal,
      ),
  };
}

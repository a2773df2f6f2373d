/**
 * Action contracts: what a host declares once per side effect — the typed input, the protected
 * fields that make the semantic effect, the policy, the approval rule, and the functions that
 * execute, verify, resolve drift and compensate.
 */
import { z } from 'zod';
import type { JsonValue } from './canonical-json.js';
import { checkContract, strictAtEveryDepth } from './contract-strictness.js';
import { ConfigurationError } from './errors.js';
import type { Receipt } from './store.js';
import type { ChannelAssurance, PolicyDecision } from './vocabulary.js';
import { checkZodCompatibility } from './zod-compatibility.js';

/** A namespaced, versioned action type such as `support.refund@1`. */
export interface ActionType {
  readonly namespace: string;
  readonly name: string;
  readonly version: number;
}

/** `namespace.name@version`. */
export function formatActionType(type: ActionType): string {
  return `${type.namespace}.${type.name}@${type.version}`;
}

/** Someone whose approval counts, and the channel assurance their evidence must carry. */
export interface Authority {
  readonly id: string;
  /** @default 'medium' */
  readonly requiredAssurance?: ChannelAssurance;
}

/** How many distinct declared authorities must approve. */
export type ApprovalRule =
  | { readonly kind: 'single'; readonly required: 1; readonly authorities: readonly Authority[] }
  | { readonly kind: 'any_of'; readonly required: 1; readonly authorities: readonly Authority[] }
  | {
      readonly kind: 'm_of_n';
      readonly required: number;
      readonly authorities: readonly Authority[];
    };

const toAuthority = (authority: Authority | string): Authority =>
  typeof authority === 'string' ? { id: authority } : authority;

function checkAuthorities(authorities: readonly Authority[], rule: string): void {
  const ids = new Set<string>();
  for (const authority of authorities) {
    if (typeof authority.id !== 'string' || authority.id.trim() === '') {
      throw new ConfigurationError('approval_rule_invalid', `${rule}: an authority has no id`);
    }
    if (ids.has(authority.id)) {
      throw new ConfigurationError(
        'approval_rule_invalid',
        `${rule}: authority ${JSON.stringify(authority.id)} is declared twice (authorities must be distinct)`,
      );
    }
    ids.add(authority.id);
  }
}

/** Builders for approval rules. Authorities may be given as ids or `Authority` objects. */
export const approvals = {
  /** Exactly this authority must approve. */
  single(authority: Authority | string): ApprovalRule {
    const authorities = [toAuthority(authority)];
    checkAuthorities(authorities, 'approvals.single');
    return { kind: 'single', required: 1, authorities };
  },
  /** Any one of these authorities. */
  anyOf(authorities: readonly (Authority | string)[]): ApprovalRule {
    const list = authorities.map(toAuthority);
    if (list.length === 0) {
      throw new ConfigurationError('approval_rule_invalid', 'approvals.anyOf needs an authority');
    }
    checkAuthorities(list, 'approvals.anyOf');
    return { kind: 'any_of', required: 1, authorities: list };
  },
  /** At least `required` distinct authorities out of these. */
  mOfN(required: number, authorities: readonly (Authority | string)[]): ApprovalRule {
    const list = authorities.map(toAuthority);
    checkAuthorities(list, 'approvals.mOfN');
    if (!Number.isSafeInteger(required) || required < 1 || required > list.length) {
      throw new ConfigurationError(
        'approval_rule_invalid',
        `approvals.mOfN(${required}, …): required must be an integer between 1 and ${list.length}`,
      );
    }
    return { kind: 'm_of_n', required, authorities: list };
  },
};

/** What the policy sees besides the input. Policies must be pure and deterministic. */
export interface PolicyContext {
  readonly tenant: string;
  readonly principal: string;
  readonly agent: string | null;
  readonly mode: 'commit' | 'dry_run';
  /**
   * Facts the host read from its own systems for this decision (e.g. the order's eligible refund
   * amount), or null. They are committed and stored encrypted with the input, so the policy stays
   * a pure function of (input, facts) and approvers approve the facts it saw.
   */
  readonly facts: JsonValue | null;
}

/** The policy's verdict; `reason` becomes the reason code (short snake_case is best). */
export interface PolicyVerdict {
  readonly decision: PolicyDecision;
  readonly reason: string;
}

/** What every host function is told about the proposal it acts on. */
export interface ProposalContext {
  readonly tenant: string;
  readonly proposal: string;
  readonly semanticEffectKey: string;
  /**
   * Hand this to providers that honour an idempotency key. Derived from the semantic effect:
   * the same on every application-level retry and after a restart; new only after an allowed
   * resend (I5).
   */
  readonly providerIdempotencyKey: string;
  /** 0 for the first send, +1 per allowed resend. */
  readonly resendGeneration: number;
}

/**
 * What `execute` is given besides the input: the proposal, and the lease it runs under. Once the
 * lease ends a reconciler may take the proposal over, so stop at the deadline: hand `signal` to
 * `fetch` (or your client) and send nothing after it fired.
 */
export interface ExecuteContext extends ProposalContext {
  /** When this call's lease ends (epoch ms on the guard's clock); `signal` aborts then. */
  readonly deadlineMs: number;
  /**
   * Aborted when the lease ends (its reason is a `SideguardError` with code `lease_ended`).
   * A write still in flight at that moment may land: the settling window covers it.
   */
  readonly signal: AbortSignal;
}

/** One step of an itemized execution. */
export interface ExecutionItem {
  readonly step: string;
  readonly outcome: 'committed' | 'failed' | 'unknown';
  readonly receipt?: Receipt;
  readonly reason?: string;
}

/**
 * What `execute` reports. Throwing counts as `failed_unknown`: it never causes a resend.
 * `reason` is stored in the ledger as a reason code: make it a short code such as
 * `http_402_card_declined`, never free text from a provider (it may name a customer).
 */
export type ExecuteResult =
  /**
   * The provider accepted the write; verification confirms it. `output` is private data the
   * caller may need again (e.g. the provider's response): the guard keeps it encrypted with the
   * proposal and returns it to later calls that resolve to the same effect (a duplicate gets the
   * original result). Canonical JSON, at most 256 KiB; otherwise it is not kept (the ledger says
   * why). Erasure removes it.
   */
  | { readonly kind: 'accepted'; readonly receipt: Receipt; readonly output?: JsonValue }
  /** The provider certainly did not apply the write (e.g. a 4xx validation error). */
  | { readonly kind: 'failed_known'; readonly reason: string }
  /** Nobody knows whether the write happened (timeout, lost response). */
  | { readonly kind: 'failed_unknown'; readonly reason: string }
  /** Several steps, some committed and some not. */
  | { readonly kind: 'partial'; readonly items: readonly ExecutionItem[] };

/** What `verify` is given besides the input. */
export interface VerifyContext extends ExecuteContext {
  /** Receipts the guard already recorded for this proposal. */
  readonly receipts: readonly Receipt[];
  /** 1 for the first verification attempt. */
  readonly attempt: number;
}

/** What the provider says about the effect. */
export type VerifyResult =
  /** `output`: as for `accepted`; kept only when the executor did not already keep one. */
  | { readonly kind: 'present'; readonly receipt: Receipt; readonly output?: JsonValue }
  /** `final`: the provider authoritatively says the effect is absent (not just "not yet"). */
  | { readonly kind: 'absent'; readonly final: boolean }
  | { readonly kind: 'unknown'; readonly reason?: string };

/** What `resolve` says about the world since the proposal was prepared. */
export type ResolveResult<Input> =
  | { readonly kind: 'current' }
  /** Material drift: the proposal goes `stale`; a fresh proposal is prepared with `input`. */
  | {
      readonly kind: 'drifted';
      readonly reason: string;
      /** The input of the fresh proposal. @default the stale proposal's input */
      readonly input?: Input;
      /** The facts as they are now, for the fresh proposal's policy. @default the old facts */
      readonly facts?: JsonValue;
    };

/** What `compensate` is given besides the input. */
export interface CompensateContext extends ExecuteContext {
  readonly receipts: readonly Receipt[];
  /** A provider idempotency key for the compensating write, stable across retries. */
  readonly compensationIdempotencyKey: string;
}

/** What `compensate` reports. */
export type CompensateResult =
  | { readonly kind: 'compensated'; readonly receipt: Receipt }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * How the effect is shaped: `single` (one write), `itemized` (independent items: a partial
 * result is `partially_succeeded`), or `all_or_nothing` (steps that belong together: a partial
 * result is `compensation_required`).
 */
export type EffectKind = 'single' | 'itemized' | 'all_or_nothing';

type InputShape = z.ZodObject<z.ZodRawShape>;

/** Everything `defineAction` needs. Timing values are milliseconds. */
export interface ActionConfig<Schema extends InputShape> {
  readonly type: ActionType;
  /**
   * A zod object. It is made strict at every depth (unknown keys rejected in nested objects,
   * arrays, unions, records…); `z.coerce`, transforms, preprocess, `.catch()`, loose objects and
   * intersections of objects are refused, since they would change or drop what the agent sent.
   */
  readonly input: Schema;
  /** The fields whose canonical hash is the semantic effect key. Retry metadata stays out. */
  readonly protectedFields: readonly (keyof z.output<Schema> & string)[];
  readonly policy: (input: z.output<Schema>, context: PolicyContext) => PolicyVerdict;
  /** Needed when the policy can return `require_approval`. */
  readonly approval?: ApprovalRule;
  /** A human-readable, JSON-safe summary of the proposed effect (kept encrypted). */
  readonly preview?: (input: z.output<Schema>) => JsonValue;
  readonly execute: (input: z.output<Schema>, context: ExecuteContext) => Promise<ExecuteResult>;
  readonly verify: (input: z.output<Schema>, context: VerifyContext) => Promise<VerifyResult>;
  /** The drift check, run before the claim (no lease is held yet). */
  readonly resolve?: (
    input: z.output<Schema>,
    context: ProposalContext,
  ) => Promise<ResolveResult<z.output<Schema>>>;
  readonly compensate?: (
    input: z.output<Schema>,
    context: CompensateContext,
  ) => Promise<CompensateResult>;
  /** Extra principals (besides the proposer and the declared authorities) who may read. */
  readonly readers?: readonly string[];
  /**
   * Principals who may settle an unknown outcome with `resolveOutcome`, attesting what they
   * found at the provider. They may also `read` the action's proposals. @default none
   */
  readonly operators?: readonly string[];
  /**
   * Who may erase this action's proposals (`guard.erase`). Nobody else may, not even the
   * proposer, an approver or a reader: erasing destroys the input an approver or auditor may
   * still need (decision 047). Erasers need not be readers. @default [] (nobody)
   */
  readonly erasers?: readonly string[];
  /** @default 900_000 (15 minutes) */
  readonly proposalTtlMs?: number;
  /**
   * The settling window: how long after `commit_started` the provider's "absent" is trusted
   * (an unknown outcome is verified no earlier). With `allowResendAfterFinalAbsence` it must be
   * at least `executionLeaseMs` (plus the provider's own settling time), so an earlier attempt
   * can no longer land once a resend starts. @default 0
   */
  readonly verificationDelayMs?: number;
  /** @default 5 */
  readonly maxVerificationAttempts?: number;
  /**
   * How long one executor, verifier or compensator holds a proposal; its `signal` aborts when
   * it ends. @default 30_000
   */
  readonly executionLeaseMs?: number;
  /** @default 'single' */
  readonly effectKind?: EffectKind;
  /**
   * Whether a final "absent" from the provider allows a resend (I5). Needs
   * `verificationDelayMs >= executionLeaseMs`. @default false
   */
  readonly allowResendAfterFinalAbsence?: boolean;
}

/** A defined action: the config with defaults applied and the strict schema. */
export interface ActionDefinition<Schema extends InputShape = InputShape> {
  readonly kind: 'sideguard.action';
  readonly type: ActionType;
  /** `namespace.name@version`. */
  readonly typeName: string;
  readonly schema: z.ZodType<z.output<Schema>>;
  readonly config: ActionConfig<Schema>;
  readonly protectedFields: readonly string[];
  readonly approval: ApprovalRule | undefined;
  readonly proposalTtlMs: number;
  readonly verificationDelayMs: number;
  readonly maxVerificationAttempts: number;
  readonly executionLeaseMs: number;
  readonly effectKind: EffectKind;
  readonly allowResendAfterFinalAbsence: boolean;
}

/** The input type of an action definition. */
export type ActionInput<A> = A extends ActionDefinition<infer S> ? z.output<S> : never;

const NAME = /^[a-z][a-z0-9_-]{0,63}$/;

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isSafeInteger(result) || result < 0) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction: ${name} must be a non-negative integer, got ${String(value)}`,
    );
  }
  return result;
}

/** Refuses a principal list (`operators`, `erasers`) that is not distinct, non-empty ids. */
function checkPrincipalList(list: unknown, what: string): void {
  if (list === undefined) return;
  const valid =
    Array.isArray(list) &&
    list.every((id) => typeof id === 'string' && id.trim() !== '' && id.length <= 256) &&
    new Set(list).size === list.length;
  if (!valid) {
    throw new ConfigurationError(
      'action_config_invalid',
      `${what} must be an array of distinct, non-empty principal ids`,
    );
  }
}

/** Declares an action once. Throws `ConfigurationError` on a contract that cannot be safe. */
export function defineAction<Schema extends InputShape>(
  config: ActionConfig<Schema>,
): ActionDefinition<Schema> {
  const { type } = config;
  if (!NAME.test(type.namespace) || !NAME.test(type.name)) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction: namespace and name must match ${NAME} (got ${JSON.stringify(type.namespace)}.${JSON.stringify(type.name)})`,
    );
  }
  if (!Number.isSafeInteger(type.version) || type.version < 1) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction: version must be a positive integer, got ${String(type.version)}`,
    );
  }
  const typeName = formatActionType(type);
  checkZodCompatibility(config.input, `defineAction(${typeName})`);
  if (!(config.input instanceof z.ZodObject)) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): input must be a z.object(...) schema`,
    );
  }
  checkContract(typeName, config.input);
  const shapeKeys = new Set(Object.keys(config.input.shape));
  if (config.protectedFields.length === 0) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): protectedFields is empty, so every proposal would be the same effect; name the fields that define the effect`,
    );
  }
  for (const field of config.protectedFields) {
    if (!shapeKeys.has(field)) {
      throw new ConfigurationError(
        'action_config_invalid',
        `defineAction(${typeName}): protected field ${JSON.stringify(field)} is not in the input schema`,
      );
    }
  }
  if (new Set(config.protectedFields).size !== config.protectedFields.length) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): protectedFields lists a field twice`,
    );
  }
  const maxVerificationAttempts = positiveInteger(
    config.maxVerificationAttempts,
    5,
    'maxVerificationAttempts',
  );
  if (maxVerificationAttempts < 1) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): maxVerificationAttempts must be at least 1`,
    );
  }
  checkPrincipalList(config.erasers, `defineAction(${typeName}): erasers`);
  const executionLeaseMs = positiveInteger(config.executionLeaseMs, 30_000, 'executionLeaseMs');
  if (executionLeaseMs < 1) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): executionLeaseMs must be at least 1`,
    );
  }
  checkPrincipalList(config.operators, `defineAction(${typeName}): operators`);
  const verificationDelayMs = positiveInteger(config.verificationDelayMs, 0, 'verificationDelayMs');
  const allowResendAfterFinalAbsence = config.allowResendAfterFinalAbsence ?? false;
  if (allowResendAfterFinalAbsence && verificationDelayMs < executionLeaseMs) {
    throw new ConfigurationError(
      'action_config_invalid',
      `defineAction(${typeName}): allowResendAfterFinalAbsence needs verificationDelayMs >= executionLeaseMs (got ${verificationDelayMs} < ${executionLeaseMs}): a resend is safe only once no earlier attempt can still land, and an attempt may run until its lease ends. Set verificationDelayMs to at least ${executionLeaseMs} (plus the provider's own settling time), or shorten executionLeaseMs`,
    );
  }
  return {
    kind: 'sideguard.action',
    type,
    typeName,
    schema: strictAtEveryDepth(config.input) as unknown as z.ZodType<z.output<Schema>>,
    config,
    protectedFields: [...config.protectedFields],
    approval: config.approval,
    proposalTtlMs: positiveInteger(config.proposalTtlMs, 900_000, 'proposalTtlMs'),
    verificationDelayMs,
    maxVerificationAttempts,
    executionLeaseMs,
    effectKind: config.effectKind ?? 'single',
    allowResendAfterFinalAbsence,
  };
}

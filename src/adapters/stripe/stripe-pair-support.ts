/**
 * What the Stripe executor/verifier pairs share: the metadata that carries the semantic effect
 * onto the Stripe object (so `verify` finds it even where idempotency keys are not honoured),
 * the pair's shape, and turning Stripe objects into receipts and private outputs.
 */
import type Stripe from 'stripe';
import type {
  ExecuteContext,
  ExecuteResult,
  VerifyContext,
  VerifyResult,
} from '../../core/action.js';
import type { JsonValue } from '../../core/canonical-json.js';
import type { Receipt } from '../../core/store.js';
import { contextSignal } from './stripe-call-scope.js';
import { assertSafeStripeClient, type StripeCallOutcome } from './stripe-outcome.js';

/** Metadata keys the pairs write on every object they create or update. */
export const StripeEffectMetadata = {
  /** The guard's semantic effect key: what `verify` looks for. */
  effect: 'sideguard_effect',
  /** The proposal that sent the write (for people reading the Stripe dashboard). */
  proposal: 'sideguard_proposal',
} as const;

/** Stripe metadata as the pairs take it: string values only. */
export type StripeMetadata = Readonly<Record<string, string>>;

/** An `execute`/`verify` pair to spread into `defineAction({ ... })`. */
export interface ExecutorVerifierPair<Input> {
  readonly execute: (input: Input, context: ExecuteContext) => Promise<ExecuteResult>;
  readonly verify: (input: Input, context: VerifyContext) => Promise<VerifyResult>;
}

/** What every pair is configured with. */
export interface StripePairConfig {
  /** A client created with `new Stripe(key, { ...stripeClientSettings(transport) })`. */
  readonly stripe: Stripe;
  /** The receipts' provider name. @default 'stripe' */
  readonly provider?: string;
  /**
   * Aborts the pair's Stripe calls. The guard's own signal (tied to the execution lease) is used
   * instead whenever the guard passes one in the context.
   */
  readonly signal?: AbortSignal;
}

/** Checks the client once, when the pair is made; returns what every call needs. */
export function pairSetup(config: StripePairConfig, caller: string) {
  assertSafeStripeClient(config.stripe, caller);
  const provider = config.provider ?? 'stripe';
  return {
    provider,
    signalFor: (context: object) => contextSignal(context, config.signal),
  };
}

/** The caller's metadata plus the effect markers (the markers win over caller keys). */
export function withEffectMetadata(
  metadata: StripeMetadata | undefined,
  context: Pick<ExecuteContext, 'semanticEffectKey' | 'proposal'>,
): Record<string, string> {
  return {
    ...metadata,
    [StripeEffectMetadata.effect]: context.semanticEffectKey,
    [StripeEffectMetadata.proposal]: context.proposal,
  };
}

/** True when a Stripe object carries this effect's marker. */
export function carriesEffect(
  object: { readonly metadata?: Stripe.Metadata | null },
  semanticEffectKey: string,
): boolean {
  return object.metadata?.[StripeEffectMetadata.effect] === semanticEffectKey;
}

/** A Stripe object as plain JSON for a private output (its `lastResponse` is not enumerable). */
function jsonOutput(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

/** A write's result: accepted with the object's receipt and the object as private output. */
export function writeResult<T>(
  outcome: StripeCallOutcome<T>,
  receipt: (value: T) => Receipt,
): ExecuteResult {
  if (outcome.kind !== 'succeeded') return outcome;
  return { kind: 'accepted', receipt: receipt(outcome.value), output: jsonOutput(outcome.value) };
}

/** A verification that found the object: present, with its receipt and private output. */
export function presentResult<T>(value: T, receipt: (value: T) => Receipt): VerifyResult {
  return { kind: 'present', receipt: receipt(value), output: jsonOutput(value) };
}

/** Receipt details: only short, non-private scalars (ids, amounts, statuses). */
export function receiptOf(
  id: string,
  provider: string,
  details: Readonly<Record<string, unknown>>,
): Receipt {
  const kept: Record<string, JsonValue> = {};
  for (const [name, value] of Object.entries(details)) {
    if (typeof value === 'string' && value.length <= 128) kept[name] = value;
    if (typeof value === 'number' && Number.isSafeInteger(value)) kept[name] = value;
  }
  return { id, provider, details: kept };
}

/** The request id Stripe gave a response, when the client exposes it. */
export function requestIdOf(object: object): string | undefined {
  const lastResponse = (object as { lastResponse?: { requestId?: unknown } }).lastResponse;
  return typeof lastResponse?.requestId === 'string' ? lastResponse.requestId : undefined;
}

/** The mapper's parameters, or undefined when it threw (nothing was sent). */
export function paramsFor<Input, Params>(
  mapper: (input: Input) => Params,
  input: Input,
): Params | undefined {
  try {
    return mapper(input);
  } catch {
    return undefined;
  }
}

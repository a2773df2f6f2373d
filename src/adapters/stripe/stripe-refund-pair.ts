/**
 * The Stripe refund executor/verifier pair. `execute` creates the refund once, with the guard's
 * provider idempotency key and the semantic effect in its metadata; `verify` lists the charge's
 * (or payment intent's) refunds and finds the one carrying the effect, so an unknown outcome is
 * settled by Stripe's own records whether or not Stripe honoured the key.
 */
import type Stripe from 'stripe';
import type { ExecuteResult, VerifyResult } from '../../core/action.js';
import { runStripeCall } from './stripe-outcome.js';
import {
  carriesEffect,
  type ExecutorVerifierPair,
  pairSetup,
  paramsFor,
  presentResult,
  receiptOf,
  requestIdOf,
  type StripeMetadata,
  type StripePairConfig,
  withEffectMetadata,
  writeResult,
} from './stripe-pair-support.js';

/** The refund's parameters; `charge` or `payment_intent` names what is refunded. */
export type StripeRefundParams = Omit<Stripe.RefundCreateParams, 'metadata'> & {
  readonly metadata?: StripeMetadata;
};

/** Configuration of `stripeRefundPair`. */
export interface StripeRefundPairConfig<Input> extends StripePairConfig {
  /** The refund for an input. Must be deterministic: `verify` calls it again. */
  readonly refund: (input: Input) => StripeRefundParams;
  /** The most refunds `verify` reads for one charge before answering unknown. @default 1_000 */
  readonly maxRefundsScanned?: number;
}

function refundReceipt(refund: Stripe.Refund, provider: string, matches?: number) {
  return receiptOf(refund.id, provider, {
    operation: 'create_refund',
    amountMinor: refund.amount,
    currency: refund.currency,
    status: refund.status ?? undefined,
    charge: refund.charge,
    requestId: requestIdOf(refund),
    ...(matches !== undefined && matches > 1 ? { matchingRefunds: matches } : {}),
  });
}

function listFilter(params: StripeRefundParams): Stripe.RefundListParams | undefined {
  if (typeof params.charge === 'string') return { charge: params.charge };
  if (typeof params.payment_intent === 'string') return { payment_intent: params.payment_intent };
  return undefined;
}

/** Every refund carrying the effect (oldest first), or why the list could not be read fully. */
async function refundsWithEffect(
  stripe: Stripe,
  filter: Stripe.RefundListParams,
  semanticEffectKey: string,
  maxScanned: number,
): Promise<Stripe.Refund[] | 'scan_limit'> {
  const matches: Stripe.Refund[] = [];
  let scanned = 0;
  for await (const refund of stripe.refunds.list({ ...filter, limit: 100 })) {
    if (carriesEffect(refund, semanticEffectKey)) matches.unshift(refund);
    scanned += 1;
    if (scanned >= maxScanned) return matches.length > 0 ? matches : 'scan_limit';
  }
  return matches;
}

/**
 * The refund pair: `defineAction({ ..., ...stripeRefundPair({ stripe, refund: (input) =>
 * ({ charge: input.chargeId, amount: input.amountMinor }) }) })`. The receipt is the refund id;
 * the private output is the refund object. Throws `ConfigurationError`
 * (`stripe_client_unsafe`) for a client that could send a refund twice.
 */
export function stripeRefundPair<Input>(
  config: StripeRefundPairConfig<Input>,
): ExecutorVerifierPair<Input> {
  const { provider, signalFor } = pairSetup(config, 'stripeRefundPair');
  const maxScanned = config.maxRefundsScanned ?? 1_000;
  const { stripe } = config;
  return {
    async execute(input, context): Promise<ExecuteResult> {
      const params = paramsFor(config.refund, input);
      if (params === undefined) return { kind: 'failed_known', reason: 'stripe_params_invalid' };
      const outcome = await runStripeCall(
        () =>
          stripe.refunds.create(
            { ...params, metadata: withEffectMetadata(params.metadata, context) },
            { idempotencyKey: context.providerIdempotencyKey },
          ),
        { signal: signalFor(context) },
      );
      return writeResult(outcome, (refund) => refundReceipt(refund, provider));
    },

    async verify(input, context): Promise<VerifyResult> {
      const params = paramsFor(config.refund, input);
      const filter = params === undefined ? undefined : listFilter(params);
      if (filter === undefined) return { kind: 'unknown', reason: 'refund_target_missing' };
      const outcome = await runStripeCall(
        () => refundsWithEffect(stripe, filter, context.semanticEffectKey, maxScanned),
        { signal: signalFor(context) },
      );
      if (outcome.kind !== 'succeeded') return { kind: 'unknown', reason: outcome.reason };
      if (outcome.value === 'scan_limit') return { kind: 'unknown', reason: 'refund_scan_limit' };
      const [original] = outcome.value;
      if (original === undefined) return { kind: 'absent', final: true };
      const matches = outcome.value.length;
      return presentResult(original, (refund) => refundReceipt(refund, provider, matches));
    },
  };
}

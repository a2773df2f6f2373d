/**
 * The Stripe customer-update executor/verifier pair. `execute` updates the customer once, with
 * the guard's provider idempotency key and the semantic effect in the customer's metadata;
 * `verify` reads the customer back. The marker is one metadata key, so a later update for
 * another effect overwrites it: a customer without this effect's marker is therefore "absent,
 * not final" (never a reason to resend on its own), and one with it is "present".
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

/** Which customer to update, and how. */
export interface StripeCustomerUpdate {
  readonly customer: string;
  readonly params: Omit<Stripe.CustomerUpdateParams, 'metadata'> & {
    readonly metadata?: StripeMetadata;
  };
}

/** Configuration of `stripeCustomerUpdatePair`. */
export interface StripeCustomerUpdatePairConfig<Input> extends StripePairConfig {
  /** The update for an input. Must be deterministic: `verify` calls it again. */
  readonly update: (input: Input) => StripeCustomerUpdate;
}

const customerReceipt = (customer: Stripe.Customer, provider: string) =>
  receiptOf(customer.id, provider, {
    operation: 'update_customer',
    requestId: requestIdOf(customer),
  });

/**
 * The customer-update pair: `defineAction({ ..., ...stripeCustomerUpdatePair({ stripe,
 * update: (input) => ({ customer: input.customerId, params: { preferred_locales: [...] } }) }) })`.
 * The receipt is the customer id; the private output is the updated customer.
 */
export function stripeCustomerUpdatePair<Input>(
  config: StripeCustomerUpdatePairConfig<Input>,
): ExecutorVerifierPair<Input> {
  const { provider, signalFor } = pairSetup(config, 'stripeCustomerUpdatePair');
  const { stripe } = config;
  return {
    async execute(input, context): Promise<ExecuteResult> {
      const update = paramsFor(config.update, input);
      if (update === undefined) return { kind: 'failed_known', reason: 'stripe_params_invalid' };
      const outcome = await runStripeCall(
        () =>
          stripe.customers.update(
            update.customer,
            { ...update.params, metadata: withEffectMetadata(update.params.metadata, context) },
            { idempotencyKey: context.providerIdempotencyKey },
          ),
        { signal: signalFor(context) },
      );
      return writeResult(outcome, (customer) => customerReceipt(customer, provider));
    },

    async verify(input, context): Promise<VerifyResult> {
      const update = paramsFor(config.update, input);
      if (update === undefined) return { kind: 'unknown', reason: 'stripe_params_invalid' };
      const outcome = await runStripeCall(() => stripe.customers.retrieve(update.customer), {
        signal: signalFor(context),
      });
      if (outcome.kind !== 'succeeded') return { kind: 'unknown', reason: outcome.reason };
      const customer = outcome.value;
      if (customer.deleted === true) return { kind: 'unknown', reason: 'customer_deleted' };
      if (!carriesEffect(customer, context.semanticEffectKey)) {
        return { kind: 'absent', final: false };
      }
      return presentResult(customer, (found) => customerReceipt(found, provider));
    },
  };
}

/**
 * `sideguard/stripe`: executor/verifier pairs for Stripe writes (refunds, customer updates) on
 * the official `stripe` client (an optional peer dependency) sending through the executor kit,
 * and the pieces to build more: the safe client settings and `runStripeCall`. See
 * docs/executor-kit.md.
 */

export type { StripeAttempt } from './stripe-call-scope.js';
export { contextSignal } from './stripe-call-scope.js';
export {
  type StripeCustomerUpdate,
  type StripeCustomerUpdatePairConfig,
  stripeCustomerUpdatePair,
} from './stripe-customer-update-pair.js';
export {
  createStripeHttpClient,
  isKitStripeHttpClient,
  type StripeClientSettingsOptions,
  stripeClientSettings,
  stripeErrorCode,
} from './stripe-http-client.js';
export {
  assertSafeStripeClient,
  classifyStripeAttempts,
  runStripeCall,
  type StripeCallOutcome,
  stripeHttpRules,
} from './stripe-outcome.js';
export {
  type ExecutorVerifierPair,
  StripeEffectMetadata,
  type StripeMetadata,
  type StripePairConfig,
} from './stripe-pair-support.js';
export {
  type StripeRefundPairConfig,
  type StripeRefundParams,
  stripeRefundPair,
} from './stripe-refund-pair.js';

/**
 * The actions of the seeded customer-support workflow, wired to the sandbox's provider-shaped
 * APIs: `support.refund@1` (a Stripe-shaped refund) and `support.refund_and_close@1` (the refund
 * plus closing the CRM ticket, which must happen together or be compensated).
 *
 * The refund policy (deterministic, a pure function of the input and the facts the runner read
 * from the orders API when the agent proposed):
 * 1. the currency must be the order's currency, else `block` (`currency_mismatch`);
 * 2. the amount must not exceed the order's eligible refund amount, else `block`
 *    (`exceeds_eligible_amount`);
 * 3. above the hard limit (2,000.00) → `block` (`over_hard_limit`);
 * 4. above the automatic-approval limit for the currency (100.00) → `require_approval`
 *    (`over_auto_approval_limit`) from 2 of 3: finance-lead (high assurance), support-manager,
 *    risk-officer;
 * 5. otherwise `allow` (`within_auto_approval_limit`).
 */
import { z } from 'zod';
import { type ActionDefinition, approvals, defineAction } from '../core/action.js';
import type { Receipt } from '../core/store.js';
import { providerRequest, replyReason, writeReplyVerdict } from './provider-client.js';

/** Where the sandbox's data plane is and which keys the agent uses. */
export interface ProviderEndpoints {
  readonly dataUrl: string;
  /** @default 'sk_test_sideguard_agent' */
  readonly paymentsKey?: string;
  /** @default 'orders_test_sideguard_agent' */
  readonly ordersKey?: string;
  /** @default 'pat-sandbox-sideguard-agent' */
  readonly crmKey?: string;
  /** How long a write may take before its outcome is unknown. @default 800 */
  readonly writeTimeoutMs?: number;
}

/** Automatic approval limit per currency, in minor units. */
export const AUTO_APPROVAL_LIMIT_MINOR: Readonly<Record<string, number>> = {
  usd: 10_000,
  eur: 10_000,
};
/** Above this nothing is refunded automatically or with approval. */
export const HARD_LIMIT_MINOR = 200_000;

/** Facts the runner reads from the orders API before proposing. */
export interface RefundFacts {
  readonly eligibleMinor: number;
  readonly currency: string;
}

const amount = z.string().regex(/^\d{1,7}\.\d{2}$/, 'amount must be a decimal string like "25.00"');

export const refundInputSchema = z.object({
  caseId: z.string().min(1).max(64),
  orderId: z.string().min(1).max(64),
  chargeId: z.string().min(1).max(64),
  customerId: z.string().min(1).max(64),
  amount,
  currency: z.string().regex(/^[a-z]{3}$/),
  reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']),
  /** Free text from the agent; private (kept encrypted, never in the ledger). */
  note: z.string().max(2_000).optional(),
  /** Retry metadata: not part of the effect. */
  requestId: z.string().max(128).optional(),
});

export const refundAndCloseInputSchema = refundInputSchema.extend({
  ticketId: z.string().regex(/^\d{1,12}$/),
});

const toMinor = (value: string): number => Math.round(Number(value) * 100);

function refundPolicy(
  input: z.output<typeof refundInputSchema>,
  facts: unknown,
): { decision: 'allow' | 'require_approval' | 'block'; reason: string } {
  const known = facts as Partial<RefundFacts> | null;
  if (typeof known?.eligibleMinor !== 'number' || typeof known.currency !== 'string') {
    return { decision: 'block', reason: 'order_facts_missing' };
  }
  const minor = toMinor(input.amount);
  if (input.currency !== known.currency) return { decision: 'block', reason: 'currency_mismatch' };
  if (minor > known.eligibleMinor) return { decision: 'block', reason: 'exceeds_eligible_amount' };
  if (minor > HARD_LIMIT_MINOR) return { decision: 'block', reason: 'over_hard_limit' };
  if (minor > (AUTO_APPROVAL_LIMIT_MINOR[input.currency] ?? 0)) {
    return { decision: 'require_approval', reason: 'over_auto_approval_limit' };
  }
  return { decision: 'allow', reason: 'within_auto_approval_limit' };
}

/** The approval rule both actions share. */
export const refundApproval = approvals.mOfN(2, [
  { id: 'finance-lead', requiredAssurance: 'high' },
  { id: 'support-manager', requiredAssurance: 'medium' },
  { id: 'risk-officer', requiredAssurance: 'medium' },
]);

/** Who may erase refund proposals: the privacy office, never the agent that proposed them. */
export const refundErasers: readonly string[] = ['privacy-officer'];

/** Reads an order's eligible refund amount (the policy's facts) from the orders API. */
export async function readRefundFacts(
  endpoints: ProviderEndpoints,
  orderId: string,
): Promise<RefundFacts | undefined> {
  const reply = await providerRequest({
    method: 'GET',
    url: `${endpoints.dataUrl}/commerce/orders/${encodeURIComponent(orderId)}`,
    headers: { authorization: `Bearer ${endpoints.ordersKey ?? 'orders_test_sideguard_agent'}` },
  });
  if (reply.kind !== 'response' || reply.status !== 200) return undefined;
  const body = reply.body as { eligible_refund_amount_minor?: unknown; currency?: unknown };
  if (typeof body.eligible_refund_amount_minor !== 'number' || typeof body.currency !== 'string') {
    return undefined;
  }
  return { eligibleMinor: body.eligible_refund_amount_minor, currency: body.currency };
}

interface StripeRefund {
  readonly id: string;
  readonly amount: number;
  readonly charge: string;
  readonly metadata?: Record<string, string>;
}

async function createRefund(
  endpoints: ProviderEndpoints,
  input: z.output<typeof refundInputSchema>,
  context: { semanticEffectKey: string; providerIdempotencyKey: string; proposal: string },
) {
  return providerRequest({
    method: 'POST',
    url: `${endpoints.dataUrl}/v1/refunds`,
    headers: {
      authorization: `Bearer ${endpoints.paymentsKey ?? 'sk_test_sideguard_agent'}`,
      'idempotency-key': context.providerIdempotencyKey,
    },
    body: {
      form: {
        charge: input.chargeId,
        amount: String(toMinor(input.amount)),
        reason: input.reason,
        'metadata[sideguard_effect]': context.semanticEffectKey,
        'metadata[sideguard_proposal]': context.proposal,
        'metadata[case]': input.caseId,
      },
    },
    timeoutMs: endpoints.writeTimeoutMs ?? 800,
  });
}

const refundReceipt = (refund: StripeRefund): Receipt => ({
  id: refund.id,
  provider: 'payments',
  details: { operation: 'create_refund', amountMinor: refund.amount, charge: refund.charge },
});

/** Looks for the refund carrying this effect among the charge's refunds (authoritative list). */
async function findRefund(
  endpoints: ProviderEndpoints,
  chargeId: string,
  semanticEffectKey: string,
): Promise<
  | { kind: 'present'; receipt: Receipt }
  | { kind: 'absent'; final: true }
  | { kind: 'unknown'; reason: string }
> {
  const reply = await providerRequest({
    method: 'GET',
    url: `${endpoints.dataUrl}/v1/refunds?charge=${encodeURIComponent(chargeId)}&limit=100`,
    headers: { authorization: `Bearer ${endpoints.paymentsKey ?? 'sk_test_sideguard_agent'}` },
  });
  if (reply.kind !== 'response' || reply.status !== 200) {
    return { kind: 'unknown', reason: replyReason(reply) };
  }
  const refunds = ((reply.body as { data?: StripeRefund[] }).data ?? []).filter(
    (refund) => refund.metadata?.sideguard_effect === semanticEffectKey,
  );
  const found = refunds[0];
  return found === undefined
    ? { kind: 'absent', final: true }
    : { kind: 'present', receipt: refundReceipt(found) };
}

async function refundFactsResolve(
  endpoints: ProviderEndpoints,
  input: z.output<typeof refundInputSchema>,
) {
  const facts = await readRefundFacts(endpoints, input.orderId);
  if (facts === undefined) return { kind: 'current' as const };
  return toMinor(input.amount) > facts.eligibleMinor
    ? { kind: 'drifted' as const, reason: 'eligible_amount_dropped', facts: { ...facts } }
    : { kind: 'current' as const };
}

/** `support.refund@1`: one Stripe-shaped refund. */
export function defineRefundAction(
  endpoints: ProviderEndpoints,
): ActionDefinition<typeof refundInputSchema> {
  return defineAction({
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: refundInputSchema,
    protectedFields: ['orderId', 'chargeId', 'customerId', 'amount', 'currency'],
    policy: (input, context) => refundPolicy(input, context.facts),
    approval: refundApproval,
    erasers: refundErasers,
    preview: (input) => ({
      summary: `Refund ${input.amount} ${input.currency.toUpperCase()} on order ${input.orderId} (${input.reason})`,
    }),
    execute: async (input, context) => {
      const reply = await createRefund(endpoints, input, context);
      const verdict = writeReplyVerdict(reply);
      if (verdict === 'succeeded' && reply.kind === 'response') {
        return { kind: 'accepted', receipt: refundReceipt(reply.body as StripeRefund) };
      }
      return verdict === 'failed_known'
        ? { kind: 'failed_known', reason: replyReason(reply) }
        : { kind: 'failed_unknown', reason: replyReason(reply) };
    },
    verify: (input, context) => findRefund(endpoints, input.chargeId, context.semanticEffectKey),
    resolve: (input) => refundFactsResolve(endpoints, input),
    proposalTtlMs: 30 * 60_000,
    verificationDelayMs: 2_000,
    maxVerificationAttempts: 5,
    // Resends are declared safe, so the lease may not outlast the settling window.
    executionLeaseMs: 2_000,
    effectKind: 'single',
    // A charge's refund list is authoritative once the settling window has passed.
    allowResendAfterFinalAbsence: true,
  });
}

/**
 * `support.refund_and_close@1`: the refund, then closing the CRM ticket. They belong together
 * (`all_or_nothing`): a refund whose ticket cannot be closed needs compensation, which flags the
 * ticket for a human instead (a refund cannot be taken back).
 */
export function defineRefundAndCloseAction(
  endpoints: ProviderEndpoints,
): ActionDefinition<typeof refundAndCloseInputSchema> {
  const crmHeaders = {
    authorization: `Bearer ${endpoints.crmKey ?? 'pat-sandbox-sideguard-agent'}`,
  };
  const patchTicket = (ticketId: string, properties: Record<string, string>) =>
    providerRequest({
      method: 'PATCH',
      url: `${endpoints.dataUrl}/crm/v3/objects/tickets/${encodeURIComponent(ticketId)}`,
      headers: crmHeaders,
      body: { json: { properties } },
      timeoutMs: endpoints.writeTimeoutMs ?? 800,
    });
  return defineAction({
    type: { namespace: 'support', name: 'refund_and_close', version: 1 },
    input: refundAndCloseInputSchema,
    protectedFields: ['orderId', 'chargeId', 'customerId', 'amount', 'currency', 'ticketId'],
    policy: (input, context) => refundPolicy(input, context.facts),
    approval: refundApproval,
    erasers: refundErasers,
    preview: (input) => ({
      summary: `Refund ${input.amount} ${input.currency.toUpperCase()} on order ${input.orderId} and close ticket ${input.ticketId}`,
    }),
    execute: async (input, context) => {
      const reply = await createRefund(endpoints, input, context);
      const verdict = writeReplyVerdict(reply);
      if (verdict !== 'succeeded' || reply.kind !== 'response') {
        return verdict === 'failed_known'
          ? { kind: 'failed_known', reason: replyReason(reply) }
          : { kind: 'failed_unknown', reason: replyReason(reply) };
      }
      const refund = refundReceipt(reply.body as StripeRefund);
      const closed = await patchTicket(input.ticketId, {
        hs_pipeline_stage: '4',
        sideguard_effect: context.semanticEffectKey,
      });
      const closedVerdict = writeReplyVerdict(closed);
      return {
        kind: 'partial',
        items: [
          { step: 'refund', outcome: 'committed', receipt: refund },
          closedVerdict === 'succeeded'
            ? {
                step: 'close_ticket',
                outcome: 'committed',
                receipt: {
                  id: input.ticketId,
                  provider: 'crm',
                  details: { operation: 'update_ticket' },
                },
              }
            : {
                step: 'close_ticket',
                outcome: closedVerdict === 'failed_known' ? 'failed' : 'unknown',
                reason: replyReason(closed),
              },
        ],
      };
    },
    verify: (input, context) => findRefund(endpoints, input.chargeId, context.semanticEffectKey),
    resolve: (input) => refundFactsResolve(endpoints, input),
    compensate: async (input, context) => {
      const reply = await patchTicket(input.ticketId, {
        hs_ticket_priority: 'HIGH',
        sideguard_effect: `${context.semanticEffectKey}:compensation`,
      });
      return writeReplyVerdict(reply) === 'succeeded'
        ? {
            kind: 'compensated',
            receipt: { id: input.ticketId, provider: 'crm', details: { operation: 'flag_ticket' } },
          }
        : { kind: 'failed', reason: replyReason(reply) };
    },
    proposalTtlMs: 30 * 60_000,
    verificationDelayMs: 2_000,
    maxVerificationAttempts: 5,
    // Resends are declared safe, so the lease may not outlast the settling window.
    executionLeaseMs: 2_000,
    effectKind: 'all_or_nothing',
    allowResendAfterFinalAbsence: true,
  });
}

/**
 * The built-in actions of the seeded support workflow (`support.refund@1`,
 * `support.refund_and_close@1`), wired to the provider model instead of HTTP: the same schemas,
 * policy, approval rule, timing and failure mapping as `src/verify/refund-actions.ts`.
 */
import { type ActionDefinition, defineAction } from '../../core/action.js';
import type { Receipt } from '../../core/store.js';
import { replyReason, writeReplyVerdict } from '../../verify/provider-client.js';
import {
  AUTO_APPROVAL_LIMIT_MINOR,
  HARD_LIMIT_MINOR,
  refundAndCloseInputSchema,
  refundApproval,
  refundInputSchema,
} from '../../verify/refund-actions.js';
import type { ModelReply, ProviderModel, Transport } from '../provider-model.js';
import type { InputBinding } from '../schedule-evidence.js';

type RefundInput = ReturnType<typeof refundInputSchema.parse>;

/**
 * How the model actions talk to the provider. `provider` is read on every call, so one
 * definition can serve schedule after schedule (a getter onto the current schedule's model).
 */
export interface ModelActionOptions {
  readonly provider: ProviderModel;
  /** The executor's HTTP client. @default 'kit' */
  readonly transport?: Transport;
  /**
   * Executors drop the guard's `AbortSignal` and send after their lease ended (a host defect;
   * the `executor_ignores_signal` breakage). @default false
   */
  readonly ignoresSignal?: boolean;
  /**
   * Whether the action re-reads the order's facts before executing (`resolve`, a drift check).
   * Without one, `run` inserts and claims in one commit (decisions 124, 126). @default true
   */
  readonly driftCheck?: boolean;
}

/** The signal a write is sent under: the lease's, unless the executor ignores it. */
const limitsOf = (options: ModelActionOptions, signal: AbortSignal) =>
  options.ignoresSignal === true ? {} : { signal };

/** The kit's verdict on a reply: a request never sent certainly did not happen. */
const verdictOf = (reply: ModelReply) =>
  reply.kind === 'not_sent' ? ('failed_known' as const) : writeReplyVerdict(reply);

/** The reason code of a reply, for the ledger. */
const reasonOf = (reply: ModelReply) =>
  reply.kind === 'not_sent' ? 'lease_ended_not_sent' : replyReason(reply);

/** Parsed amounts: a schedule parses the same few strings many times (policy, checks, resolve). */
const minorOf = new Map<string, number>();
const toMinor = (amount: string): number => {
  let minor = minorOf.get(amount);
  if (minor === undefined) {
    minor = Math.round(Number(amount) * 100);
    if (minorOf.size < 1_000) minorOf.set(amount, minor);
  }
  return minor;
};

/** The refund policy of the gate's actions (a pure function of input and facts). */
function refundPolicy(input: RefundInput, facts: unknown) {
  const known = facts as { eligibleMinor?: unknown; currency?: unknown } | null;
  if (typeof known?.eligibleMinor !== 'number' || typeof known.currency !== 'string') {
    return { decision: 'block' as const, reason: 'order_facts_missing' };
  }
  const minor = toMinor(input.amount);
  if (input.currency !== known.currency)
    return { decision: 'block' as const, reason: 'currency_mismatch' };
  if (minor > known.eligibleMinor) {
    return { decision: 'block' as const, reason: 'exceeds_eligible_amount' };
  }
  if (minor > HARD_LIMIT_MINOR) return { decision: 'block' as const, reason: 'over_hard_limit' };
  if (minor > (AUTO_APPROVAL_LIMIT_MINOR[input.currency] ?? 0)) {
    return { decision: 'require_approval' as const, reason: 'over_auto_approval_limit' };
  }
  return { decision: 'allow' as const, reason: 'within_auto_approval_limit' };
}

/** How each write of these actions is bound to the proposal's input (checked by I2/I9). */
export const MODEL_INPUT_BINDINGS: Readonly<Record<string, InputBinding>> = {
  create_refund: (write, input) =>
    write.fields.charge === input.chargeId &&
    typeof input.amount === 'string' &&
    write.fields.amount === toMinor(input.amount),
  update_ticket: (write, input) => write.objectId === input.ticketId,
  flag_ticket: (write, input) => write.objectId === input.ticketId,
};

/** Reads an order's facts (eligible amount, currency) from the provider model. */
export async function readOrderFacts(
  provider: ProviderModel,
  orderId: string,
): Promise<{ eligibleMinor: number; currency: string } | undefined> {
  const reply = await provider.read({
    operation: 'get_order',
    collection: 'orders',
    objectId: orderId,
  });
  if (reply.kind !== 'response' || reply.status !== 200) return undefined;
  const body = reply.body as { eligible_refund_amount_minor?: unknown; currency?: unknown };
  if (typeof body.eligible_refund_amount_minor !== 'number' || typeof body.currency !== 'string') {
    return undefined;
  }
  return { eligibleMinor: body.eligible_refund_amount_minor, currency: body.currency };
}

const refundReceipt = (body: { id: string; amount: number; charge: string }): Receipt => ({
  id: body.id,
  provider: 'payments',
  details: { operation: 'create_refund', amountMinor: body.amount, charge: body.charge },
});

function createRefund(
  options: ModelActionOptions,
  input: RefundInput,
  context: {
    semanticEffectKey: string;
    providerIdempotencyKey: string;
    proposal: string;
    signal: AbortSignal;
  },
): Promise<ModelReply> {
  return options.provider.write(
    {
      operation: 'create_refund',
      kind: 'create',
      collection: 'refunds',
      idempotencyKey: context.providerIdempotencyKey,
      effect: context.semanticEffectKey,
      proposal: context.proposal,
      fields: { charge: input.chargeId, amount: toMinor(input.amount), reason: input.reason },
    },
    options.transport ?? 'kit',
    limitsOf(options, context.signal),
  );
}

/** Finds the refund carrying this effect among the charge's refunds (an authoritative list). */
async function findRefund(provider: ProviderModel, chargeId: string, effect: string) {
  const reply = await provider.read({
    operation: 'list_refunds',
    collection: 'refunds',
    where: (object) => object.fields.charge === chargeId,
  });
  if (reply.kind !== 'response' || reply.status !== 200) {
    return { kind: 'unknown' as const, reason: replyReason(reply) };
  }
  const data = (
    reply.body as {
      data: { id: string; amount: number; charge: string; metadata: Record<string, string> }[];
    }
  ).data;
  const found = data.find((refund) => refund.metadata.sideguard_effect === effect);
  return found === undefined
    ? { kind: 'absent' as const, final: true }
    : { kind: 'present' as const, receipt: refundReceipt(found) };
}

async function resolveFacts(provider: ProviderModel, input: RefundInput) {
  const facts = await readOrderFacts(provider, input.orderId);
  if (facts === undefined) return { kind: 'current' as const };
  return toMinor(input.amount) > facts.eligibleMinor
    ? { kind: 'drifted' as const, reason: 'eligible_amount_dropped', facts: { ...facts } }
    : { kind: 'current' as const };
}

const failure = (reply: ModelReply) =>
  verdictOf(reply) === 'failed_known'
    ? { kind: 'failed_known' as const, reason: reasonOf(reply) }
    : { kind: 'failed_unknown' as const, reason: reasonOf(reply) };

/**
 * Timing as a real user must declare it: resends are allowed after a final absence, so the
 * settling window covers the lease (an attempt may send until its lease ends) plus the provider's
 * own worst case for landing a request it received (the model's `maxInFlightMs`, 2 s).
 */
const TIMING = {
  proposalTtlMs: 30 * 60_000,
  verificationDelayMs: 12_000,
  maxVerificationAttempts: 5,
  executionLeaseMs: 10_000,
  allowResendAfterFinalAbsence: true,
} as const;

/** `support.refund@1` against the provider model. */
export function defineModelRefundAction(
  options: ModelActionOptions,
): ActionDefinition<typeof refundInputSchema> {
  return defineAction({
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: refundInputSchema,
    protectedFields: ['orderId', 'chargeId', 'customerId', 'amount', 'currency'],
    policy: (input, context) => refundPolicy(input, context.facts),
    approval: refundApproval,
    preview: (input) => ({
      summary: `Refund ${input.amount} ${input.currency} on ${input.orderId}`,
    }),
    execute: async (input, context) => {
      const reply = await createRefund(options, input, context);
      if (verdictOf(reply) === 'succeeded' && reply.kind === 'response') {
        return { kind: 'accepted', receipt: refundReceipt(reply.body as never) };
      }
      return failure(reply);
    },
    verify: (input, context) =>
      findRefund(options.provider, input.chargeId, context.semanticEffectKey),
    ...(options.driftCheck === false
      ? {}
      : { resolve: (input: RefundInput) => resolveFacts(options.provider, input) }),
    ...TIMING,
    effectKind: 'single',
  });
}

/** `support.refund_and_close@1` against the provider model: refund, then close the ticket. */
export function defineModelRefundAndCloseAction(
  options: ModelActionOptions,
): ActionDefinition<typeof refundAndCloseInputSchema> {
  const patchTicket = (
    ticketId: string,
    operation: string,
    meta: { effect: string; proposal: string },
    fields: Record<string, string>,
    signal: AbortSignal,
  ) =>
    options.provider.write(
      { operation, kind: 'set', collection: 'tickets', objectId: ticketId, ...meta, fields },
      options.transport ?? 'kit',
      limitsOf(options, signal),
    );
  return defineAction({
    type: { namespace: 'support', name: 'refund_and_close', version: 1 },
    input: refundAndCloseInputSchema,
    protectedFields: ['orderId', 'chargeId', 'customerId', 'amount', 'currency', 'ticketId'],
    policy: (input, context) => refundPolicy(input, context.facts),
    approval: refundApproval,
    preview: (input) => ({ summary: `Refund ${input.amount} and close ticket ${input.ticketId}` }),
    execute: async (input, context) => {
      const reply = await createRefund(options, input, context);
      if (verdictOf(reply) !== 'succeeded' || reply.kind !== 'response') {
        return failure(reply);
      }
      const refund = refundReceipt(reply.body as never);
      const closed = await patchTicket(
        input.ticketId,
        'update_ticket',
        { effect: context.semanticEffectKey, proposal: context.proposal },
        {
          hs_pipeline_stage: '4',
          sideguard_effect: context.semanticEffectKey,
        },
        context.signal,
      );
      const verdict = verdictOf(closed);
      return {
        kind: 'partial',
        items: [
          { step: 'refund', outcome: 'committed', receipt: refund },
          verdict === 'succeeded'
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
                outcome: verdict === 'failed_known' ? 'failed' : 'unknown',
                reason: reasonOf(closed),
              },
        ],
      };
    },
    verify: (input, context) =>
      findRefund(options.provider, input.chargeId, context.semanticEffectKey),
    resolve: (input) => resolveFacts(options.provider, input),
    compensate: async (input, context) => {
      const effect = `${context.semanticEffectKey}:compensation`;
      const reply = await patchTicket(
        input.ticketId,
        'flag_ticket',
        { effect, proposal: context.proposal },
        { hs_ticket_priority: 'HIGH', sideguard_effect: effect },
        context.signal,
      );
      return verdictOf(reply) === 'succeeded'
        ? {
            kind: 'compensated',
            receipt: { id: input.ticketId, provider: 'crm', details: { operation: 'flag_ticket' } },
          }
        : { kind: 'failed', reason: reasonOf(reply) };
    },
    ...TIMING,
    effectKind: 'all_or_nothing',
  });
}

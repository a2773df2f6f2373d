/**
 * The Stripe-shaped payments provider: customers, payment intents, charges and refunds, with
 * Stripe's wire format and the rule that refunds never exceed what is left of a charge.
 * Effect convention: the guard puts its effect key in `metadata[sideguard_effect]`.
 */
import { type FormValue, parseForm, parseFormPairs } from '../../form-encoding.js';
import {
  basicCredentials,
  bearerToken,
  epochSeconds,
  isSafeId,
  stringMember,
} from '../../provider-kit.js';
import {
  defineOperation,
  type ExecuteContext,
  type JsonRecord,
  type JsonValue,
  type ParseResult,
  type ProviderDefinition,
  type ProviderRequest,
  type ProviderResponse,
} from '../../sandbox-types.js';
import { buildSeedCatalogue } from '../../seed-catalogue.js';
import {
  paymentsErrors,
  paymentsIdempotency,
  resourceMissing,
  StripeErrorType,
  stripeError,
  unknownParameter,
} from './payments-errors.js';

const provider = 'payments';

/** Metadata key that carries the guard's semantic effect key on a refund. */
export const paymentsEffectMetadataKey = 'sideguard_effect';

/** Reasons Stripe accepts on a refund. */
export const RefundReason = {
  duplicate: 'duplicate',
  fraudulent: 'fraudulent',
  requestedByCustomer: 'requested_by_customer',
} as const;
export type RefundReason = (typeof RefundReason)[keyof typeof RefundReason];

const refundReasons: readonly string[] = Object.values(RefundReason);
const maxAmountMinor = 99_999_999;

type Fields = Map<string, FormValue>;
type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly response: ProviderResponse };

/** Reads a form body (POST) or the query (GET) and rejects parameters not in `allowed`. */
function readParameters(request: ProviderRequest, allowed: readonly string[]): Checked<Fields> {
  let parsed: ReturnType<typeof parseForm>;
  if (request.method === 'GET') {
    parsed = parseFormPairs(request.query);
  } else {
    if (request.body.length > 0 && request.contentType !== 'application/x-www-form-urlencoded') {
      return {
        ok: false,
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          `Invalid request: unsupported Content-Type ${request.contentType || '(none)'}. If error persists and you need assistance, please contact support@stripe.com.`,
        ),
      };
    }
    if (request.query.length > 0)
      return { ok: false, response: unknownParameter(request.query[0]?.[0] ?? '') };
    parsed = parseForm(request.body.toString('utf8'));
  }
  if (parsed.kind === 'malformed') {
    return {
      ok: false,
      response: stripeError(
        400,
        StripeErrorType.invalidRequest,
        parsed.message,
        parsed.param === undefined ? {} : { param: parsed.param },
      ),
    };
  }
  for (const name of parsed.fields.keys()) {
    if (!allowed.includes(name)) return { ok: false, response: unknownParameter(name) };
  }
  const expand = parsed.fields.get('expand');
  if (expand !== undefined && !Array.isArray(expand)) {
    return {
      ok: false,
      response: stripeError(400, StripeErrorType.invalidRequest, 'Invalid array', {
        param: 'expand',
      }),
    };
  }
  return { ok: true, value: parsed.fields };
}

function stringField(fields: Fields, name: string): Checked<string | undefined> {
  const value = fields.get(name);
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value !== 'string') {
    return {
      ok: false,
      response: stripeError(400, StripeErrorType.invalidRequest, `Invalid string: ${name}`, {
        param: name,
      }),
    };
  }
  if (value.length === 0) {
    return {
      ok: false,
      response: stripeError(
        400,
        StripeErrorType.invalidRequest,
        `You passed an empty string for '${name}'. We assume empty values are an attempt to unset a parameter; however '${name}' cannot be unset. You should remove '${name}' from your request or supply a non-empty value.`,
        {
          code: 'parameter_invalid_empty',
          param: name,
        },
      ),
    };
  }
  return { ok: true, value };
}

function integerField(
  fields: Fields,
  name: string,
  min: number,
  max: number,
): Checked<number | undefined> {
  const text = stringField(fields, name);
  if (!text.ok || text.value === undefined) return text as Checked<undefined>;
  const value = /^\d{1,12}$/.test(text.value) ? Number(text.value) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    return {
      ok: false,
      response: stripeError(400, StripeErrorType.invalidRequest, `Invalid integer: ${text.value}`, {
        code: 'parameter_invalid_integer',
        param: name,
      }),
    };
  }
  return { ok: true, value };
}

function metadataField(fields: Fields): Checked<Record<string, string>> {
  const value = fields.get('metadata');
  if (value === undefined || value === '') return { ok: true, value: {} };
  if (!(value instanceof Map)) {
    return {
      ok: false,
      response: stripeError(400, StripeErrorType.invalidRequest, 'Invalid object', {
        param: 'metadata',
      }),
    };
  }
  if (value.size > 50) {
    return {
      ok: false,
      response: stripeError(
        400,
        StripeErrorType.invalidRequest,
        'Invalid metadata: metadata can have at most 50 keys.',
        { param: 'metadata' },
      ),
    };
  }
  for (const [key, entry] of value) {
    if (key.length > 40 || entry.length > 500) {
      return {
        ok: false,
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          'Invalid metadata: keys can be at most 40 characters and values at most 500.',
          {
            param: `metadata[${key.slice(0, 40)}]`,
          },
        ),
      };
    }
  }
  // fromEntries defines own properties, so a key such as "__proto__" is kept as data.
  return { ok: true, value: Object.fromEntries(value) };
}

function formatMoney(amountMinor: number, currency: string): string {
  const symbol = currency === 'usd' ? '$' : `${currency.toUpperCase()} `;
  return `${symbol}${(amountMinor / 100).toFixed(2)}`;
}

function ok(body: JsonValue): ProviderResponse {
  return { status: 200, body };
}

/** Retrieval of one object by id: `GET /v1/<collection>/:id`, `expand[]` accepted and ignored. */
function retrieveOperation(name: string, path: string, collection: string, kind: string) {
  return defineOperation<{ readonly id: string }>({
    name,
    method: 'GET',
    path,
    kind: 'read',
    parse(request): ParseResult<{ readonly id: string }> {
      const fields = readParameters(request, ['expand']);
      if (!fields.ok) return { kind: 'invalid', response: fields.response };
      const id = request.params.id ?? '';
      return { kind: 'valid', input: { id }, effectKey: null };
    },
    execute(input, context) {
      const record = isSafeId(input.id) ? context.get(provider, collection, input.id) : undefined;
      return {
        response: record === undefined ? resourceMissing(404, kind, input.id, 'id') : ok(record),
      };
    },
  });
}

interface CreateRefundInput {
  readonly charge: string | undefined;
  readonly paymentIntent: string | undefined;
  readonly amountMinor: number | undefined;
  readonly reason: RefundReason | undefined;
  readonly metadata: Record<string, string>;
}

const createRefund = defineOperation<CreateRefundInput>({
  name: 'create_refund',
  method: 'POST',
  path: '/v1/refunds',
  kind: 'write',
  parse(request) {
    const fields = readParameters(request, [
      'charge',
      'payment_intent',
      'amount',
      'reason',
      'metadata',
      'expand',
    ]);
    if (!fields.ok) return { kind: 'invalid', response: fields.response };
    const charge = stringField(fields.value, 'charge');
    if (!charge.ok) return { kind: 'invalid', response: charge.response };
    const paymentIntent = stringField(fields.value, 'payment_intent');
    if (!paymentIntent.ok) return { kind: 'invalid', response: paymentIntent.response };
    if (charge.value === undefined && paymentIntent.value === undefined) {
      return {
        kind: 'invalid',
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          'One of the following params should be provided for this request: charge or payment_intent.',
          {
            code: 'parameter_missing',
          },
        ),
      };
    }
    const amount = integerField(fields.value, 'amount', 1, maxAmountMinor);
    if (!amount.ok) return { kind: 'invalid', response: amount.response };
    const reason = stringField(fields.value, 'reason');
    if (!reason.ok) return { kind: 'invalid', response: reason.response };
    if (reason.value !== undefined && !refundReasons.includes(reason.value)) {
      return {
        kind: 'invalid',
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          'Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer',
          {
            param: 'reason',
          },
        ),
      };
    }
    const metadata = metadataField(fields.value);
    if (!metadata.ok) return { kind: 'invalid', response: metadata.response };
    return {
      kind: 'valid',
      input: {
        charge: charge.value,
        paymentIntent: paymentIntent.value,
        amountMinor: amount.value,
        reason: reason.value as RefundReason | undefined,
        metadata: metadata.value,
      },
      effectKey: Object.hasOwn(metadata.value, paymentsEffectMetadataKey)
        ? (metadata.value[paymentsEffectMetadataKey] ?? null)
        : null,
    };
  },
  execute(input, context) {
    let chargeId = input.charge;
    if (input.paymentIntent !== undefined) {
      const intent = isSafeId(input.paymentIntent)
        ? context.get(provider, 'payment_intents', input.paymentIntent)
        : undefined;
      if (intent === undefined)
        return {
          response: resourceMissing(400, 'payment_intent', input.paymentIntent, 'payment_intent'),
        };
      const latest = typeof intent.latest_charge === 'string' ? intent.latest_charge : undefined;
      if (chargeId !== undefined && chargeId !== latest) {
        return {
          response: stripeError(
            400,
            StripeErrorType.invalidRequest,
            `Charge '${chargeId}' does not belong to payment_intent '${input.paymentIntent}'.`,
            {
              param: 'charge',
            },
          ),
        };
      }
      if (latest === undefined) {
        return {
          response: stripeError(
            400,
            StripeErrorType.invalidRequest,
            `This PaymentIntent (${input.paymentIntent}) does not have a successful charge to refund.`,
            {
              param: 'payment_intent',
            },
          ),
        };
      }
      chargeId = latest;
    }
    const id = chargeId ?? '';
    const charge = isSafeId(id) ? context.get(provider, 'charges', id) : undefined;
    if (charge === undefined) return { response: resourceMissing(400, 'charge', id, 'charge') };
    const chargeAmount = Number(charge.amount);
    const alreadyRefunded = Number(charge.amount_refunded);
    const currency = String(charge.currency);
    const remaining = chargeAmount - alreadyRefunded;
    if (remaining <= 0) {
      return {
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          `Charge ${id} has already been refunded.`,
          { code: 'charge_already_refunded' },
        ),
      };
    }
    const amountMinor = input.amountMinor ?? remaining;
    if (amountMinor > remaining) {
      return {
        response: stripeError(
          400,
          StripeErrorType.invalidRequest,
          `Refund amount (${formatMoney(amountMinor, currency)}) is greater than unrefunded amount on charge (${formatMoney(remaining, currency)})`,
          { code: 'amount_too_large', param: 'amount' },
        ),
      };
    }
    const refund = refundRecord(
      context.newId('re'),
      id,
      charge,
      amountMinor,
      input,
      epochSeconds(context.nowMs()),
    );
    const refundedTotal = alreadyRefunded + amountMinor;
    const updatedCharge: JsonRecord = {
      ...charge,
      amount_refunded: refundedTotal,
      refunded: refundedTotal === chargeAmount,
    };
    return {
      response: ok(refund),
      write: {
        changes: [
          { provider, collection: 'refunds', id: String(refund.id), value: refund },
          { provider, collection: 'charges', id, value: updatedCharge },
        ],
        receipt: {
          objectId: String(refund.id),
          amountMinor,
          currency,
          details: { charge: id, payment_intent: charge.payment_intent ?? null },
        },
      },
    };
  },
});

function refundRecord(
  id: string,
  chargeId: string,
  charge: JsonRecord,
  amountMinor: number,
  input: Pick<CreateRefundInput, 'reason' | 'metadata'>,
  createdSeconds: number,
): JsonRecord {
  return {
    id,
    object: 'refund',
    amount: amountMinor,
    balance_transaction: null,
    charge: chargeId,
    created: createdSeconds,
    currency: charge.currency ?? 'usd',
    metadata: input.metadata,
    payment_intent: charge.payment_intent ?? null,
    reason: input.reason ?? null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
}

interface ListRefundsInput {
  readonly charge: string | undefined;
  readonly paymentIntent: string | undefined;
  readonly limit: number;
  readonly startingAfter: string | undefined;
  readonly endingBefore: string | undefined;
}

const listRefunds = defineOperation<ListRefundsInput>({
  name: 'list_refunds',
  method: 'GET',
  path: '/v1/refunds',
  kind: 'read',
  parse(request) {
    const fields = readParameters(request, [
      'charge',
      'payment_intent',
      'limit',
      'starting_after',
      'ending_before',
      'expand',
    ]);
    if (!fields.ok) return { kind: 'invalid', response: fields.response };
    const values: Record<string, string | undefined> = {};
    for (const name of ['charge', 'payment_intent', 'starting_after', 'ending_before']) {
      const value = stringField(fields.value, name);
      if (!value.ok) return { kind: 'invalid', response: value.response };
      values[name] = value.value;
    }
    const limit = integerField(fields.value, 'limit', 1, 100);
    if (!limit.ok) return { kind: 'invalid', response: limit.response };
    return {
      kind: 'valid',
      input: {
        charge: values.charge,
        paymentIntent: values.payment_intent,
        limit: limit.value ?? 10,
        startingAfter: values.starting_after,
        endingBefore: values.ending_before,
      },
      effectKey: null,
    };
  },
  execute(input, context) {
    // Newest first, as Stripe lists; insertion order breaks ties within one second.
    let refunds = [...context.list(provider, 'refunds')].reverse();
    if (input.charge !== undefined)
      refunds = refunds.filter((refund) => refund.charge === input.charge);
    if (input.paymentIntent !== undefined)
      refunds = refunds.filter((refund) => refund.payment_intent === input.paymentIntent);
    let start = 0;
    let end = refunds.length;
    if (input.startingAfter !== undefined) {
      const index = refunds.findIndex((refund) => refund.id === input.startingAfter);
      if (index === -1)
        return { response: resourceMissing(400, 'refund', input.startingAfter, 'starting_after') };
      start = index + 1;
    } else if (input.endingBefore !== undefined) {
      const index = refunds.findIndex((refund) => refund.id === input.endingBefore);
      if (index === -1)
        return { response: resourceMissing(400, 'refund', input.endingBefore, 'ending_before') };
      end = index;
      start = Math.max(0, end - input.limit);
    }
    const page = refunds.slice(start, Math.min(end, start + input.limit));
    // Forward, more means older objects past the page; backward (ending_before), newer ones
    // before it: the client's auto-pagination follows `has_more` either way.
    const hasMore =
      input.endingBefore !== undefined && input.startingAfter === undefined
        ? start > 0
        : start + page.length < end;
    return {
      response: ok({
        object: 'list',
        data: page,
        has_more: hasMore,
        url: '/v1/refunds',
      }),
    };
  },
});

function seedPayments(seed: number): Record<string, JsonRecord[]> {
  const catalogue = buildSeedCatalogue(seed);
  const customers: JsonRecord[] = catalogue.customers.map((customer, index) => ({
    id: customer.id,
    object: 'customer',
    created:
      catalogue.orders[0] === undefined
        ? 0
        : catalogue.orders[0].createdSeconds - 86_400 * (10 - index),
    email: customer.email,
    name: customer.name,
    metadata: {},
  }));
  const paymentIntents: JsonRecord[] = [];
  const charges: JsonRecord[] = [];
  const refunds: JsonRecord[] = [];
  for (const order of catalogue.orders) {
    paymentIntents.push({
      id: order.paymentIntentId,
      object: 'payment_intent',
      amount: order.totalAmountMinor,
      amount_received: order.totalAmountMinor,
      created: order.createdSeconds,
      currency: order.currency,
      customer: order.customerId,
      latest_charge: order.chargeId,
      metadata: { order_id: order.id },
      status: 'succeeded',
    });
    const charge: JsonRecord = {
      id: order.chargeId,
      object: 'charge',
      amount: order.totalAmountMinor,
      amount_captured: order.totalAmountMinor,
      amount_refunded: order.seededRefundMinor,
      captured: true,
      created: order.createdSeconds,
      currency: order.currency,
      customer: order.customerId,
      metadata: { order_id: order.id },
      paid: true,
      payment_intent: order.paymentIntentId,
      refunded: order.seededRefundMinor === order.totalAmountMinor,
      status: 'succeeded',
    };
    charges.push(charge);
    if (order.seededRefundMinor > 0) {
      refunds.push(
        refundRecord(
          `re_sg_${String(refunds.length + 1).padStart(3, '0')}`,
          order.chargeId,
          charge,
          order.seededRefundMinor,
          { reason: RefundReason.requestedByCustomer, metadata: { order_id: order.id } },
          order.createdSeconds + 3_600,
        ),
      );
    }
  }
  return { customers, payment_intents: paymentIntents, charges, refunds, idempotency_keys: [] };
}

/** Role → operations of the payments provider. */
export const paymentsRoles = {
  /** Everything, including refunds. */
  refunds_writer: [
    'create_refund',
    'retrieve_refund',
    'list_refunds',
    'retrieve_charge',
    'retrieve_customer',
    'retrieve_payment_intent',
  ],
  /** Reads only (a restricted key). */
  reader: [
    'retrieve_refund',
    'list_refunds',
    'retrieve_charge',
    'retrieve_customer',
    'retrieve_payment_intent',
  ],
} as const;

/** The Stripe-shaped payments provider. */
export const paymentsProvider: ProviderDefinition = {
  name: provider,
  pathPrefix: '/v1/',
  operations: [
    createRefund,
    retrieveOperation('retrieve_refund', '/v1/refunds/:id', 'refunds', 'refund'),
    listRefunds,
    retrieveOperation('retrieve_charge', '/v1/charges/:id', 'charges', 'charge'),
    retrieveOperation('retrieve_customer', '/v1/customers/:id', 'customers', 'customer'),
    retrieveOperation(
      'retrieve_payment_intent',
      '/v1/payment_intents/:id',
      'payment_intents',
      'payment_intent',
    ),
  ],
  roles: paymentsRoles,
  defaultKeys: [
    {
      key: 'sk_test_sideguard_agent',
      role: 'refunds_writer',
      description: 'secret key: every payments operation',
    },
    {
      key: 'rk_test_sideguard_readonly',
      role: 'reader',
      description: 'restricted key: reads only',
    },
  ],
  credential(headers) {
    // Stripe takes the key as a Bearer token or as the Basic-auth user (`curl -u sk_test_…:`).
    return bearerToken(headers) ?? basicCredentials(headers)?.user;
  },
  errors: paymentsErrors,
  requestIdHeader: 'Request-Id',
  requestId: (token) => `req_${token}`,
  idempotency: paymentsIdempotency,
  effectOf: (collection, record) =>
    collection === 'refunds' ? stringMember(record.metadata, paymentsEffectMetadataKey) : null,
  seed: (seed) => seedPayments(seed),
};

/** Read-only helpers other providers use (orders computes refundable amounts from charges). */
export function remainingRefundableMinor(
  context: Pick<ExecuteContext, 'get'>,
  chargeId: string,
): number | null {
  const charge = context.get(provider, 'charges', chargeId);
  if (charge === undefined) return null;
  return Number(charge.amount) - Number(charge.amount_refunded);
}

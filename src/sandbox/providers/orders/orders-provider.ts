/**
 * A commerce orders API (read-only): orders with line items, the charge that paid them and the
 * eligible refund amount computed live from payments state, so a refund made anywhere changes it.
 */
import { bearerToken, isSafeId } from '../../provider-kit.js';
import {
  defineOperation,
  type ExecuteContext,
  type JsonRecord,
  type ProviderDefinition,
  type ProviderErrorShapes,
  type ProviderResponse,
} from '../../sandbox-types.js';
import { buildSeedCatalogue } from '../../seed-catalogue.js';
import { remainingRefundableMinor } from '../payments/payments-provider.js';

const provider = 'orders';

/** An orders-API error body: `{ error: { code, message } }`. */
export function ordersError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): ProviderResponse {
  return {
    status,
    body: { error: { code, message } },
    ...(headers === undefined ? {} : { headers }),
  };
}

const ordersErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) =>
    ordersError(404, 'route_not_found', `No route for ${method} ${pathname}`),
  // This API is ours to define: an unknown key is 403 (known to be wrong), a missing one 401.
  auth: (failure) =>
    failure === 'missing'
      ? ordersError(401, 'unauthenticated', 'Send an API key as Authorization: Bearer <key>', {
          'WWW-Authenticate': 'Bearer',
        })
      : failure === 'unknown'
        ? ordersError(403, 'invalid_api_key', 'The API key is not recognised')
        : ordersError(403, 'forbidden', 'The API key may not call this operation'),
  reservedHeader: (header) =>
    ordersError(
      400,
      'reserved_header',
      `The header ${header} is reserved by the Sideguard sandbox`,
    ),
  payloadTooLarge: (limitBytes) =>
    ordersError(413, 'payload_too_large', `Request body exceeds ${limitBytes} bytes`),
  rateLimited: (retryAfterSeconds) =>
    ordersError(429, 'rate_limited', 'Too many requests', {
      'Retry-After': String(retryAfterSeconds),
    }),
  internal: (status) => ordersError(status, 'internal_error', 'Internal error'),
  badRequest: (message) => ordersError(400, 'invalid_request', message),
};

/** The wire form of an order, with the refund position read from payments now. */
function orderObject(order: JsonRecord, context: Pick<ExecuteContext, 'get'>): JsonRecord {
  const total = Number(order.total_amount_minor);
  const chargeId = String(order.charge_id);
  const remaining = remainingRefundableMinor(context, chargeId);
  const eligible = remaining === null ? 0 : Math.max(0, remaining);
  return {
    ...order,
    refunded_amount_minor: total - eligible,
    eligible_refund_amount_minor: eligible,
  };
}

const listOrders = defineOperation<{
  readonly customerId: string | undefined;
  readonly limit: number;
}>({
  name: 'list_orders',
  method: 'GET',
  path: '/commerce/orders',
  kind: 'read',
  parse(request) {
    let customerId: string | undefined;
    let limit = 20;
    for (const [name, value] of request.query) {
      if (name === 'customer_id') customerId = value;
      else if (
        name === 'limit' &&
        /^\d{1,3}$/.test(value) &&
        Number(value) >= 1 &&
        Number(value) <= 100
      )
        limit = Number(value);
      else if (name === 'limit')
        return {
          kind: 'invalid',
          response: ordersError(400, 'invalid_parameter', 'limit must be an integer from 1 to 100'),
        };
      else
        return {
          kind: 'invalid',
          response: ordersError(400, 'unknown_parameter', `Unknown query parameter: ${name}`),
        };
    }
    return { kind: 'valid', input: { customerId, limit }, effectKey: null };
  },
  execute(input, context) {
    const orders = context
      .list(provider, 'orders')
      .filter((order) => input.customerId === undefined || order.customer_id === input.customerId);
    const page = orders.slice(0, input.limit).map((order) => orderObject(order, context));
    return {
      response: {
        status: 200,
        body: { object: 'list', data: page, has_more: orders.length > page.length },
      },
    };
  },
});

const retrieveOrder = defineOperation<{ readonly id: string }>({
  name: 'retrieve_order',
  method: 'GET',
  path: '/commerce/orders/:id',
  kind: 'read',
  parse(request) {
    if (request.query.length > 0) {
      return {
        kind: 'invalid',
        response: ordersError(
          400,
          'unknown_parameter',
          `Unknown query parameter: ${request.query[0]?.[0] ?? ''}`,
        ),
      };
    }
    return { kind: 'valid', input: { id: request.params.id ?? '' }, effectKey: null };
  },
  execute(input, context) {
    const order = isSafeId(input.id) ? context.get(provider, 'orders', input.id) : undefined;
    if (order === undefined)
      return {
        response: ordersError(404, 'order_not_found', `No order ${JSON.stringify(input.id)}`),
      };
    return { response: { status: 200, body: orderObject(order, context) } };
  },
});

function seedOrders(seed: number): Record<string, JsonRecord[]> {
  const catalogue = buildSeedCatalogue(seed);
  const orders = catalogue.orders.map(
    (order): JsonRecord => ({
      id: order.id,
      object: 'order',
      number: order.number,
      customer_id: order.customerId,
      status: 'fulfilled',
      currency: order.currency,
      line_items: order.lineItems.map((item) => ({
        sku: item.sku,
        name: item.name,
        quantity: item.quantity,
        unit_amount_minor: item.unitAmountMinor,
        amount_minor: item.amountMinor,
      })),
      total_amount_minor: order.totalAmountMinor,
      charge_id: order.chargeId,
      payment_intent_id: order.paymentIntentId,
      created_at: new Date(order.createdSeconds * 1000).toISOString(),
    }),
  );
  return { orders };
}

/** The commerce orders provider (reads payments state for refund positions). */
export const ordersProvider: ProviderDefinition = {
  name: provider,
  pathPrefix: '/commerce/',
  dependsOn: ['payments'],
  operations: [listOrders, retrieveOrder],
  roles: { orders_reader: ['list_orders', 'retrieve_order'] },
  defaultKeys: [
    { key: 'orders_test_sideguard_agent', role: 'orders_reader', description: 'read orders' },
  ],
  credential: (headers) => bearerToken(headers),
  errors: ordersErrors,
  requestIdHeader: 'X-Request-Id',
  requestId: (token) => `ordreq_${token}`,
  seed: (seed) => seedOrders(seed),
};

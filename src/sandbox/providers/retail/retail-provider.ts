/**
 * The τ-bench retail provider: 500 users, 1,000 orders and 50 products from the benchmark's
 * data, its five reads and seven writes with the benchmark's checks, error strings and float
 * arithmetic. Opt-in (`providers: ['retail']`): its seed is 2.5 MB. The sandbox sees a write's
 * semantic effect in the write itself (the tool and its exact arguments), so its own write
 * counts show any write that landed twice — which the benchmark's end-state oracle cannot.
 */
import { bearerToken } from '../../provider-kit.js';
import type { JsonRecord, ProviderDefinition, ProviderErrorShapes } from '../../sandbox-types.js';
import { loadRetailDataset } from './retail-data.js';
import {
  type RetailArgumentType,
  readOperation,
  retailError,
  retailProviderName,
  writeOperation,
} from './retail-operations.js';
import type { RetailReadResult } from './retail-reads.js';
import {
  findUserIdByEmail,
  findUserIdByNameZip,
  getOrderDetails,
  getProductDetails,
  getUserDetails,
  listAllProductTypes,
} from './retail-reads.js';
import type { RetailView } from './retail-records.js';
import type { RetailWriteResult } from './retail-writes.js';
import {
  cancelPendingOrder,
  exchangeDeliveredOrderItems,
  modifyPendingOrderAddress,
  modifyPendingOrderItems,
  modifyPendingOrderPayment,
  modifyUserAddress,
  returnDeliveredOrderItems,
} from './retail-writes.js';

const address: Record<string, RetailArgumentType> = {
  address1: 'string',
  address2: 'string',
  city: 'string',
  state: 'string',
  country: 'string',
  zip: 'string',
};

/** Every benchmark tool the provider serves and its arguments, reads then writes. */
export const retailToolArguments = {
  find_user_id_by_email: { email: 'string' },
  find_user_id_by_name_zip: { first_name: 'string', last_name: 'string', zip: 'string' },
  get_user_details: { user_id: 'string' },
  get_order_details: { order_id: 'string' },
  get_product_details: { product_id: 'string' },
  list_all_product_types: {},
  cancel_pending_order: { order_id: 'string', reason: 'string' },
  modify_pending_order_address: { order_id: 'string', ...address },
  modify_user_address: { user_id: 'string', ...address },
  modify_pending_order_payment: { order_id: 'string', payment_method_id: 'string' },
  modify_pending_order_items: {
    order_id: 'string',
    item_ids: 'string[]',
    new_item_ids: 'string[]',
    payment_method_id: 'string',
  },
  return_delivered_order_items: {
    order_id: 'string',
    item_ids: 'string[]',
    payment_method_id: 'string',
  },
  exchange_delivered_order_items: {
    order_id: 'string',
    item_ids: 'string[]',
    new_item_ids: 'string[]',
    payment_method_id: 'string',
  },
} as const satisfies Record<string, Record<string, RetailArgumentType>>;

/** A benchmark tool the provider serves. */
export type RetailToolName = keyof typeof retailToolArguments;

/** The seven write tools. */
export const retailWriteTools = [
  'cancel_pending_order',
  'modify_pending_order_address',
  'modify_user_address',
  'modify_pending_order_payment',
  'modify_pending_order_items',
  'return_delivered_order_items',
  'exchange_delivered_order_items',
] as const satisfies readonly RetailToolName[];

/** What runs a tool against a view of state: a read's answer or a write's changed records. */
export type RetailToolRun =
  | { readonly kind: 'read'; run(view: RetailView, args: never): RetailReadResult }
  | { readonly kind: 'write'; run(view: RetailView, args: never): RetailWriteResult };

/** Every tool by name: its kind and its benchmark semantics. */
export const retailTools: Readonly<Record<RetailToolName, RetailToolRun>> = {
  find_user_id_by_email: { kind: 'read', run: findUserIdByEmail },
  find_user_id_by_name_zip: { kind: 'read', run: findUserIdByNameZip },
  get_user_details: { kind: 'read', run: getUserDetails },
  get_order_details: { kind: 'read', run: getOrderDetails },
  get_product_details: { kind: 'read', run: getProductDetails },
  list_all_product_types: { kind: 'read', run: listAllProductTypes },
  cancel_pending_order: { kind: 'write', run: cancelPendingOrder },
  modify_pending_order_address: { kind: 'write', run: modifyPendingOrderAddress },
  modify_user_address: { kind: 'write', run: modifyUserAddress },
  modify_pending_order_payment: { kind: 'write', run: modifyPendingOrderPayment },
  modify_pending_order_items: { kind: 'write', run: modifyPendingOrderItems },
  return_delivered_order_items: { kind: 'write', run: returnDeliveredOrderItems },
  exchange_delivered_order_items: { kind: 'write', run: exchangeDeliveredOrderItems },
};

const operations = (Object.keys(retailTools) as RetailToolName[]).map((name) => {
  const tool = retailTools[name];
  return tool.kind === 'read'
    ? readOperation(name, retailToolArguments[name], tool.run)
    : writeOperation(name, retailToolArguments[name], tool.run);
});

const retailErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) =>
    retailError(404, 'route_not_found', `No route for ${method} ${pathname}`),
  auth: (failure) =>
    failure === 'missing'
      ? retailError(401, 'unauthenticated', 'Send an API key as Authorization: Bearer <key>', {
          'WWW-Authenticate': 'Bearer',
        })
      : failure === 'unknown'
        ? retailError(403, 'invalid_api_key', 'The API key is not recognised')
        : retailError(403, 'forbidden', 'The API key may not call this operation'),
  reservedHeader: (header) =>
    retailError(
      400,
      'reserved_header',
      `The header ${header} is reserved by the Sideguard sandbox`,
    ),
  payloadTooLarge: (limitBytes) =>
    retailError(413, 'payload_too_large', `Request body exceeds ${limitBytes} bytes`),
  rateLimited: (retryAfterSeconds) =>
    retailError(429, 'rate_limited', 'Too many requests', {
      'Retry-After': String(retryAfterSeconds),
    }),
  internal: (status) => retailError(status, 'internal_error', 'Internal error'),
  badRequest: (message) => retailError(400, 'invalid_request', message),
};

/** The dataset as seed records; each carries its key as `id` (the benchmark's records have none). */
function seedRetail(): Record<string, JsonRecord[]> {
  const data = loadRetailDataset();
  const withId = (records: Readonly<Record<string, JsonRecord>>) =>
    Object.entries(records).map(([id, record]) => ({ id, ...structuredClone(record) }));
  return {
    users: withId(data.users),
    orders: withId(data.orders),
    products: withId(data.products),
  };
}

const readTools = operations.filter((op) => op.kind === 'read').map((op) => op.name);
const allTools = operations.map((op) => op.name);

/** The retail provider (τ-bench retail semantics; seed independent of the sandbox seed). */
export const retailProvider: ProviderDefinition = {
  name: retailProviderName,
  pathPrefix: '/retail/',
  operations,
  roles: { retail_agent: allTools, retail_reader: readTools },
  defaultKeys: [
    {
      key: 'retail_test_sideguard_agent',
      role: 'retail_agent',
      description: 'read and write retail users and orders',
    },
    { key: 'retail_test_sideguard_reader', role: 'retail_reader', description: 'read only' },
  ],
  credential: (headers) => bearerToken(headers),
  errors: retailErrors,
  requestIdHeader: 'X-Request-Id',
  requestId: (token) => `rtlreq_${token}`,
  seed: () => seedRetail(),
};

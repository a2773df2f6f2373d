/**
 * The seven retail writes as declared actions. Every argument is protected: each one changes
 * what is written (which order, which items, which address, which payment method, which
 * reason), and none is retry metadata — so a retry is the same effect and any different change
 * is a different one. `verify` looks for the effect in the sandbox's state, which the provider
 * commits before it answers, so "not there" after the settling window is final.
 */
import { z } from 'zod';
import { type ActionDefinition, defineAction, type VerifyResult } from '../../core/action.js';
import type { RetailOrder, RetailUser } from '../../sandbox/providers/retail/retail-records.js';

/** Where the actions reach the retail API (the sandbox data plane) and with which key. */
export interface RetailApiConfig {
  readonly dataUrl: string;
  readonly apiKey: string;
  /** One request's deadline, in ms. @default 10_000 */
  readonly requestTimeoutMs?: number;
}

/** Timing of the retail actions: short, so a replay under faults settles in seconds. */
export const retailActionTiming = {
  executionLeaseMs: 1_200,
  verificationDelayMs: 1_200,
  maxVerificationAttempts: 10,
} as const;

const id = z.string().min(1).max(100);
const ids = z.array(id).min(1).max(50);
const text = z.string().max(200);
const address = {
  address1: text,
  address2: text,
  city: text,
  state: text,
  country: text,
  zip: text,
};

/** The contract (input schema) of each write, by benchmark tool name. */
export const retailWriteInputs = {
  cancel_pending_order: z.object({ order_id: id, reason: text }),
  modify_pending_order_address: z.object({ order_id: id, ...address }),
  modify_user_address: z.object({ user_id: id, ...address }),
  modify_pending_order_payment: z.object({ order_id: id, payment_method_id: id }),
  modify_pending_order_items: z.object({
    order_id: id,
    item_ids: ids,
    new_item_ids: ids,
    payment_method_id: id,
  }),
  return_delivered_order_items: z.object({ order_id: id, item_ids: ids, payment_method_id: id }),
  exchange_delivered_order_items: z.object({
    order_id: id,
    item_ids: ids,
    new_item_ids: ids,
    payment_method_id: id,
  }),
} as const;

/** A retail write tool's name. */
export type RetailWriteName = keyof typeof retailWriteInputs;

type Input = Record<string, string | readonly string[]>;

const sameAddress = (stored: unknown, input: Input) =>
  typeof stored === 'object' &&
  stored !== null &&
  Object.keys(address).every(
    (field) => (stored as Record<string, unknown>)[field] === input[field],
  );
const sorted = (values: unknown) => [...((values as string[] | undefined) ?? [])].sort();
const sameList = (left: unknown, right: unknown) =>
  JSON.stringify(sorted(left)) === JSON.stringify(sorted(right));

/** Whether the effect of `tool` with `input` shows in the order (or user) now. */
export const retailEffectVisible: Readonly<
  Record<
    RetailWriteName,
    (input: Input, order: RetailOrder | undefined, user: RetailUser | undefined) => boolean
  >
> = {
  cancel_pending_order: (input, order) =>
    order?.status === 'cancelled' && order.cancel_reason === input.reason,
  modify_pending_order_address: (input, order) => sameAddress(order?.address, input),
  modify_user_address: (input, _order, user) => sameAddress(user?.address, input),
  modify_pending_order_payment: (input, order) =>
    (order?.payment_history ?? [])
      .slice(1)
      .some(
        (entry) =>
          entry.transaction_type === 'payment' &&
          entry.payment_method_id === input.payment_method_id,
      ),
  modify_pending_order_items: (input, order) =>
    order?.status === 'pending (item modified)' &&
    (input.new_item_ids as readonly string[]).every((item) =>
      order.items.some((held) => held.item_id === item),
    ),
  return_delivered_order_items: (input, order) =>
    order?.status === 'return requested' &&
    sameList(order.return_items, input.item_ids) &&
    order.return_payment_method_id === input.payment_method_id,
  exchange_delivered_order_items: (input, order) =>
    order?.status === 'exchange requested' &&
    sameList(order.exchange_items, input.item_ids) &&
    sameList(order.exchange_new_items, input.new_item_ids) &&
    order.exchange_payment_method_id === input.payment_method_id,
};

/** GETs one read tool of the retail API; `undefined` when it did not answer 200. */
async function readRecord<T>(
  api: RetailApiConfig,
  tool: string,
  argument: string,
  value: string,
  signal: AbortSignal,
): Promise<T | undefined | 'unknown'> {
  const url = new URL(`/retail/v1/${tool}`, api.dataUrl);
  url.searchParams.set(argument, value);
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${api.apiKey}` },
      signal: AbortSignal.any([signal, AbortSignal.timeout(api.requestTimeoutMs ?? 10_000)]),
    });
    const body = (await response.json()) as { result?: T };
    if (response.status === 200) return body.result;
    return response.status === 422 ? undefined : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Looks for the write's effect in the sandbox's state. */
async function verifyInState(
  api: RetailApiConfig,
  tool: RetailWriteName,
  input: Input,
  signal: AbortSignal,
  receiptId: string,
): Promise<VerifyResult> {
  const byUser = tool === 'modify_user_address';
  const record = byUser
    ? await readRecord<RetailUser>(
        api,
        'get_user_details',
        'user_id',
        String(input.user_id),
        signal,
      )
    : await readRecord<RetailOrder>(
        api,
        'get_order_details',
        'order_id',
        String(input.order_id),
        signal,
      );
  if (record === 'unknown') return { kind: 'unknown', reason: 'retail_api_unreachable' };
  const visible = byUser
    ? retailEffectVisible[tool](input, undefined, record as RetailUser | undefined)
    : retailEffectVisible[tool](input, record as RetailOrder | undefined, undefined);
  return visible
    ? { kind: 'present', receipt: { id: receiptId, provider: 'retail' } }
    : { kind: 'absent', final: true };
}

/** Sends the write to the retail API once (the action's own executor, outside bindings). */
async function executeDirect(
  api: RetailApiConfig,
  tool: RetailWriteName,
  input: Input,
  signal: AbortSignal,
  receiptId: string,
) {
  let response: Response;
  try {
    response = await fetch(new URL(`/retail/v1/${tool}`, api.dataUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
      signal: AbortSignal.any([signal, AbortSignal.timeout(api.requestTimeoutMs ?? 10_000)]),
    });
    await response.arrayBuffer();
  } catch {
    return { kind: 'failed_unknown', reason: 'retail_api_no_answer' } as const;
  }
  if (response.status === 200) {
    return { kind: 'accepted', receipt: { id: receiptId, provider: 'retail' } } as const;
  }
  if (
    response.status >= 400 &&
    response.status < 500 &&
    response.status !== 409 &&
    response.status !== 429
  ) {
    return { kind: 'failed_known', reason: `http_${response.status}` } as const;
  }
  return { kind: 'failed_unknown', reason: `http_${response.status}` } as const;
}

/** The seven declared retail actions (`retail.<tool>@1`), by tool name. */
export function retailActions(
  api: RetailApiConfig,
): Readonly<Record<RetailWriteName, ActionDefinition>> {
  const define = (tool: RetailWriteName): ActionDefinition => {
    const schema = retailWriteInputs[tool] as z.ZodObject<z.ZodRawShape>;
    return defineAction({
      type: { namespace: 'retail', name: tool, version: 1 },
      input: schema,
      protectedFields: Object.keys(schema.shape) as never,
      policy: () => ({ decision: 'allow', reason: 'customer_service_write' }),
      preview: (input) => ({ tool, ...(input as Record<string, string | string[]>) }),
      execute: (input, context) =>
        executeDirect(api, tool, input as Input, context.signal, context.providerIdempotencyKey),
      verify: (input, context) =>
        verifyInState(api, tool, input as Input, context.signal, context.providerIdempotencyKey),
      ...retailActionTiming,
      allowResendAfterFinalAbsence: true,
    }) as unknown as ActionDefinition;
  };
  return {
    cancel_pending_order: define('cancel_pending_order'),
    modify_pending_order_address: define('modify_pending_order_address'),
    modify_user_address: define('modify_user_address'),
    modify_pending_order_payment: define('modify_pending_order_payment'),
    modify_pending_order_items: define('modify_pending_order_items'),
    return_delivered_order_items: define('return_delivered_order_items'),
    exchange_delivered_order_items: define('exchange_delivered_order_items'),
  };
}

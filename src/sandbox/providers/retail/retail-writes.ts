/**
 * The seven write tools of the τ-bench retail domain with the benchmark's semantics: checks in
 * the benchmark's order, its exact error strings, its effects and its float arithmetic
 * (SEMANTICS.md beside the data). Pure: each returns the changed records, never touches state.
 */
import { pyRound2 } from './py-round.js';
import {
  copyOf,
  isGiftCard,
  type RetailAddress,
  type RetailOrder,
  type RetailPaymentMethod,
  type RetailUser,
  type RetailVariant,
  type RetailView,
} from './retail-records.js';

/** What a write tool produced: the benchmark's error string, or the records it changed. */
export type RetailWriteResult =
  | { readonly kind: 'error'; readonly message: string }
  | {
      readonly kind: 'written';
      /** What the tool answers: the order, or the user for `modify_user_address`. */
      readonly result: RetailOrder | RetailUser;
      readonly order?: RetailOrder;
      readonly user?: RetailUser;
    };

const error = (message: string): RetailWriteResult => ({ kind: 'error', message });

/** Reasons `cancel_pending_order` accepts. */
export const cancelReasons = ['no longer needed', 'ordered by mistake'] as const;

/** A variant of a product by item id (own properties only: ids are caller data). */
function variantOf(view: RetailView, productId: string, itemId: string): RetailVariant | undefined {
  const variants = view.product(productId)?.variants;
  return variants !== undefined && Object.hasOwn(variants, itemId) ? variants[itemId] : undefined;
}

/** A user's payment method by id (own properties only). */
function methodOf(user: RetailUser | undefined, id: string): RetailPaymentMethod | undefined {
  const methods = user?.payment_methods;
  return methods !== undefined && Object.hasOwn(methods, id) ? methods[id] : undefined;
}

function count(list: readonly string[], value: string): number {
  return list.filter((entry) => entry === value).length;
}

/** The id asked for more times than the order holds it, or `undefined`. */
function missingItem(order: RetailOrder, itemIds: readonly string[]): string | undefined {
  const held = order.items.map((item) => item.item_id);
  return itemIds.find((id) => count(itemIds, id) > count(held, id));
}

/**
 * Sums new minus old prices (unrounded, in order), checking each new id is an available variant
 * of the old item's product. The old item is always the first with that id, as in the benchmark.
 */
function priceDifference(
  view: RetailView,
  order: RetailOrder,
  itemIds: readonly string[],
  newItemIds: readonly string[],
): { kind: 'error'; message: string } | { kind: 'sum'; difference: number } {
  let difference = 0;
  for (const [index, itemId] of itemIds.entries()) {
    const newItemId = newItemIds[index] ?? '';
    const item = order.items.find((candidate) => candidate.item_id === itemId);
    const variant = item === undefined ? undefined : variantOf(view, item.product_id, newItemId);
    if (item === undefined || variant === undefined || variant.available !== true) {
      return { kind: 'error', message: `Error: new item ${newItemId} not found or available` };
    }
    difference += variant.price - item.price;
  }
  return { kind: 'sum', difference };
}

/** `cancel_pending_order`: refunds every history entry; gift cards are credited at once. */
export function cancelPendingOrder(
  view: RetailView,
  args: { order_id: string; reason: string },
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'pending') return error('Error: non-pending order cannot be cancelled');
  if (!(cancelReasons as readonly string[]).includes(args.reason)) {
    return error('Error: invalid reason');
  }
  const order = copyOf(found);
  const owner = view.user(order.user_id);
  const user = owner === undefined ? undefined : copyOf(owner);
  let credited = false;
  const refunds = order.payment_history.map((payment) => {
    const method = methodOf(user, payment.payment_method_id);
    if (isGiftCard(payment.payment_method_id) && method !== undefined) {
      method.balance = pyRound2((method.balance ?? 0) + payment.amount);
      credited = true;
    }
    return {
      transaction_type: 'refund' as const,
      amount: payment.amount,
      payment_method_id: payment.payment_method_id,
    };
  });
  order.status = 'cancelled';
  order.cancel_reason = args.reason;
  order.payment_history.push(...refunds);
  return { kind: 'written', result: order, order, ...(credited && user ? { user } : {}) };
}

/** `modify_pending_order_address`: replaces the address of a pending order. */
export function modifyPendingOrderAddress(
  view: RetailView,
  args: { order_id: string } & RetailAddress,
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'pending') return error('Error: non-pending order cannot be modified');
  const order = copyOf(found);
  order.address = addressOf(args);
  return { kind: 'written', result: order, order };
}

/** `modify_user_address`: replaces a user's default address. */
export function modifyUserAddress(
  view: RetailView,
  args: { user_id: string } & RetailAddress,
): RetailWriteResult {
  const found = view.user(args.user_id);
  if (found === undefined) return error('Error: user not found');
  const user = copyOf(found);
  user.address = addressOf(args);
  return { kind: 'written', result: user, user };
}

function addressOf(args: RetailAddress): RetailAddress {
  return {
    address1: args.address1,
    address2: args.address2,
    city: args.city,
    state: args.state,
    country: args.country,
    zip: args.zip,
  };
}

/** `modify_pending_order_payment`: moves the one payment to another method of the user. */
export function modifyPendingOrderPayment(
  view: RetailView,
  args: { order_id: string; payment_method_id: string },
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'pending') return error('Error: non-pending order cannot be modified');
  const owner = view.user(found.user_id);
  const method = methodOf(owner, args.payment_method_id);
  if (owner === undefined || method === undefined) return error('Error: payment method not found');
  const first = found.payment_history[0];
  if (found.payment_history.length !== 1 || first?.transaction_type !== 'payment') {
    return error('Error: there should be exactly one payment for a pending order');
  }
  if (first.payment_method_id === args.payment_method_id) {
    return error('Error: the new payment method should be different from the current one');
  }
  const amount = first.amount;
  if (method.source === 'gift_card' && (method.balance ?? 0) < amount) {
    return error('Error: insufficient gift card balance to pay for the order');
  }
  const order = copyOf(found);
  const user = copyOf(owner);
  order.payment_history.push(
    { transaction_type: 'payment', amount, payment_method_id: args.payment_method_id },
    { transaction_type: 'refund', amount, payment_method_id: first.payment_method_id },
  );
  const newMethod = methodOf(user, args.payment_method_id);
  if (newMethod !== undefined && newMethod.source === 'gift_card') {
    newMethod.balance = pyRound2((newMethod.balance ?? 0) - amount);
  }
  const oldMethod = methodOf(user, first.payment_method_id);
  if (isGiftCard(first.payment_method_id) && oldMethod !== undefined) {
    oldMethod.balance = pyRound2((oldMethod.balance ?? 0) + amount);
  }
  return { kind: 'written', result: order, order, user };
}

/** `modify_pending_order_items`: swaps items for variants of the same products; pays the difference. */
export function modifyPendingOrderItems(
  view: RetailView,
  args: {
    order_id: string;
    item_ids: readonly string[];
    new_item_ids: readonly string[];
    payment_method_id: string;
  },
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'pending') return error('Error: non-pending order cannot be modified');
  const missing = missingItem(found, args.item_ids);
  if (missing !== undefined) return error(`Error: ${missing} not found`);
  if (args.item_ids.length !== args.new_item_ids.length) {
    return error('Error: the number of items to be exchanged should match');
  }
  const priced = priceDifference(view, found, args.item_ids, args.new_item_ids);
  if (priced.kind === 'error') return priced;
  const difference = priced.difference;
  const owner = view.user(found.user_id);
  const method = methodOf(owner, args.payment_method_id);
  if (owner === undefined || method === undefined) return error('Error: payment method not found');
  if (method.source === 'gift_card' && (method.balance ?? 0) < difference) {
    return error('Error: insufficient gift card balance to pay for the new item');
  }
  const order = copyOf(found);
  const user = copyOf(owner);
  order.payment_history.push({
    transaction_type: difference > 0 ? 'payment' : 'refund',
    amount: Math.abs(difference),
    payment_method_id: args.payment_method_id,
  });
  const charged = methodOf(user, args.payment_method_id);
  if (charged !== undefined && charged.source === 'gift_card') {
    charged.balance = pyRound2((charged.balance ?? 0) - difference);
  }
  for (const [index, itemId] of args.item_ids.entries()) {
    const newItemId = args.new_item_ids[index] ?? '';
    // First match on the order as changed so far, as the benchmark's loop does.
    const item = order.items.find((candidate) => candidate.item_id === itemId);
    const variant = item === undefined ? undefined : variantOf(view, item.product_id, newItemId);
    if (item === undefined || variant === undefined) continue;
    item.item_id = newItemId;
    item.price = variant.price;
    item.options = copyOf(variant.options);
  }
  order.status = 'pending (item modified)';
  return {
    kind: 'written',
    result: order,
    order,
    ...(charged?.source === 'gift_card' ? { user } : {}),
  };
}

/** `return_delivered_order_items`: marks a return; no refund entry, no balance change. */
export function returnDeliveredOrderItems(
  view: RetailView,
  args: { order_id: string; item_ids: readonly string[]; payment_method_id: string },
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'delivered') return error('Error: non-delivered order cannot be returned');
  const owner = view.user(found.user_id);
  if (methodOf(owner, args.payment_method_id) === undefined) {
    return error('Error: payment method not found');
  }
  if (
    !isGiftCard(args.payment_method_id) &&
    args.payment_method_id !== found.payment_history[0]?.payment_method_id
  ) {
    return error(
      'Error: payment method should be either the original payment method or a gift card',
    );
  }
  if (missingItem(found, args.item_ids) !== undefined) return error('Error: some item not found');
  const order = copyOf(found);
  order.status = 'return requested';
  order.return_items = sortedCodePoints(args.item_ids);
  order.return_payment_method_id = args.payment_method_id;
  return { kind: 'written', result: order, order };
}

/** `exchange_delivered_order_items`: marks an exchange and its rounded price difference. */
export function exchangeDeliveredOrderItems(
  view: RetailView,
  args: {
    order_id: string;
    item_ids: readonly string[];
    new_item_ids: readonly string[];
    payment_method_id: string;
  },
): RetailWriteResult {
  const found = view.order(args.order_id);
  if (found === undefined) return error('Error: order not found');
  if (found.status !== 'delivered') return error('Error: non-delivered order cannot be exchanged');
  const missing = missingItem(found, args.item_ids);
  if (missing !== undefined) return error(`Error: ${missing} not found`);
  if (args.item_ids.length !== args.new_item_ids.length) {
    return error('Error: the number of items to be exchanged should match');
  }
  const priced = priceDifference(view, found, args.item_ids, args.new_item_ids);
  if (priced.kind === 'error') return priced;
  const difference = pyRound2(priced.difference);
  const method = methodOf(view.user(found.user_id), args.payment_method_id);
  if (method === undefined) return error('Error: payment method not found');
  if (method.source === 'gift_card' && (method.balance ?? 0) < difference) {
    return error('Error: insufficient gift card balance to pay for the price difference');
  }
  const order = copyOf(found);
  order.status = 'exchange requested';
  order.exchange_items = sortedCodePoints(args.item_ids);
  order.exchange_new_items = sortedCodePoints(args.new_item_ids);
  order.exchange_payment_method_id = args.payment_method_id;
  order.exchange_price_difference = difference;
  return { kind: 'written', result: order, order };
}

/** Python's `sorted` on strings: by code point, not by UTF-16 unit. */
function sortedCodePoints(values: readonly string[]): string[] {
  return [...values].sort((left, right) => {
    const a = [...left].map((char) => char.codePointAt(0) ?? 0);
    const b = [...right].map((char) => char.codePointAt(0) ?? 0);
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
      const difference = (a[index] ?? 0) - (b[index] ?? 0);
      if (difference !== 0) return difference;
    }
    return a.length - b.length;
  });
}

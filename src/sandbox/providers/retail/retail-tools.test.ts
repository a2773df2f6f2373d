import { describe, expect, it } from 'vitest';
import { changedRecords, compareChanges } from '../../../worlds/retail/retail-end-state.js';
import { pyRound2 } from './py-round.js';
import { loadRetailDataset, readRetailFile } from './retail-data.js';
import { retailTools } from './retail-provider.js';
import type { RetailOrder, RetailProduct, RetailUser, RetailView } from './retail-records.js';

/** The dataset in memory with changed records on top (the sandbox does this over HTTP). */
function memoryState() {
  const base = loadRetailDataset() as unknown as {
    users: Record<string, RetailUser>;
    orders: Record<string, RetailOrder>;
    products: Record<string, RetailProduct>;
  };
  const users: Record<string, RetailUser> = {};
  const orders: Record<string, RetailOrder> = {};
  const pick = <T>(over: Record<string, T>, under: Record<string, T>, id: string) =>
    Object.hasOwn(over, id) ? over[id] : Object.hasOwn(under, id) ? under[id] : undefined;
  const view: RetailView = {
    user: (id) => pick(users, base.users, id),
    order: (id) => pick(orders, base.orders, id),
    product: (id) => (Object.hasOwn(base.products, id) ? base.products[id] : undefined),
    users: () => Object.keys(base.users).map((id) => [id, view.user(id) as RetailUser] as const),
    products: () => Object.values(base.products),
  };
  const call = (name: string, args: Record<string, unknown>) => {
    const tool = retailTools[name as keyof typeof retailTools];
    if (tool === undefined) return undefined;
    const result = tool.run(view, args as never);
    if (result.kind === 'written') {
      if (result.order !== undefined) orders[result.order.order_id] = result.order;
      if (result.user !== undefined) {
        users[result.order?.user_id ?? String(args.user_id)] = result.user;
      }
    }
    return result;
  };
  return { base, changed: { users, orders }, view, call };
}

interface Task {
  index: number;
  actions: { name: string; kwargs: Record<string, unknown> }[];
}

const tasks = (readRetailFile('tasks.json') as { test: Task[] }).test;
const expected = readRetailFile('expected_test_changes.json') as Record<
  string,
  { users?: Record<string, unknown>; orders?: Record<string, unknown> }
>;

describe('the retail tools against the benchmark oracle', () => {
  it('reproduces expected_test_changes.json for all 115 test tasks', () => {
    const initial = loadRetailDataset();
    const mismatches: string[] = [];
    for (const task of tasks) {
      const state = memoryState();
      for (const action of task.actions) state.call(action.name, action.kwargs);
      const comparison = compareChanges(expected[String(task.index)] ?? {}, {
        users: changedRecords(initial.users, state.changed.users),
        orders: changedRecords(initial.orders, state.changed.orders),
      });
      if (!comparison.matches) mismatches.push(`task ${task.index}: ${comparison.differences[0]}`);
    }
    expect(tasks).toHaveLength(115);
    expect(mismatches).toEqual([]);
  });
});

describe('reads', () => {
  const { view } = memoryState();
  it('find users by email ignoring case and by name ignoring case with an exact zip', () => {
    expect(
      retailTools.find_user_id_by_email.run(view, {
        email: 'NOAH.BROWN7922@example.com',
      } as never),
    ).toEqual({ kind: 'found', result: 'noah_brown_6181' });
    expect(
      retailTools.find_user_id_by_name_zip.run(view, {
        first_name: 'noah',
        last_name: 'BROWN',
        zip: '80279',
      } as never),
    ).toEqual({ kind: 'found', result: 'noah_brown_6181' });
    expect(
      retailTools.find_user_id_by_name_zip.run(view, {
        first_name: 'Noah',
        last_name: 'Brown',
        zip: '80278',
      } as never),
    ).toEqual({ kind: 'error', message: 'Error: user not found' });
  });

  it('answer the benchmark not-found strings', () => {
    expect(retailTools.get_order_details.run(view, { order_id: '#W0' } as never)).toEqual({
      kind: 'error',
      message: 'Error: order not found',
    });
    expect(retailTools.get_product_details.run(view, { product_id: '1' } as never)).toEqual({
      kind: 'error',
      message: 'Error: product not found',
    });
    expect(retailTools.get_user_details.run(view, { user_id: 'nobody' } as never)).toEqual({
      kind: 'error',
      message: 'Error: user not found',
    });
  });

  it('list product types sorted by name', () => {
    const listed = retailTools.list_all_product_types.run(view, {} as never);
    expect(listed.kind).toBe('found');
    const names = Object.keys((listed as { result: Record<string, string> }).result);
    expect(names).toHaveLength(50);
    expect(names).toEqual([...names].sort());
  });
});

describe('writes: checks, error strings and effects', () => {
  const { base } = memoryState();
  const orderWhere = (test: (order: RetailOrder) => boolean) => {
    const found = Object.values(base.orders).find(test);
    if (found === undefined) throw new Error('no such order in the dataset');
    return found;
  };
  const giftCardOf = (userId: string) =>
    Object.values(base.users[userId]?.payment_methods ?? {}).find((m) => m.source === 'gift_card');
  const pending = orderWhere(
    (order) =>
      order.status === 'pending' &&
      order.payment_history.length === 1 &&
      giftCardOf(order.user_id) !== undefined &&
      !order.payment_history[0]?.payment_method_id.includes('gift_card'),
  );
  const delivered = orderWhere((order) => order.status === 'delivered');
  const otherMethod = (order: RetailOrder) =>
    Object.keys(base.users[order.user_id]?.payment_methods ?? {}).find(
      (id) => id !== order.payment_history[0]?.payment_method_id && !id.includes('gift_card'),
    );

  it('cancel_pending_order checks status, then reason, and refunds every payment', () => {
    const state = memoryState();
    expect(
      state.call('cancel_pending_order', { order_id: '#W0', reason: 'ordered by mistake' }),
    ).toEqual({ kind: 'error', message: 'Error: order not found' });
    expect(
      state.call('cancel_pending_order', { order_id: delivered.order_id, reason: 'because' }),
    ).toEqual({ kind: 'error', message: 'Error: non-pending order cannot be cancelled' });
    expect(
      state.call('cancel_pending_order', { order_id: pending.order_id, reason: 'because' }),
    ).toEqual({ kind: 'error', message: 'Error: invalid reason' });
    const done = state.call('cancel_pending_order', {
      order_id: pending.order_id,
      reason: 'no longer needed',
    });
    expect(done?.kind).toBe('written');
    const order = state.view.order(pending.order_id);
    expect(order?.status).toBe('cancelled');
    expect(order?.cancel_reason).toBe('no longer needed');
    expect(order?.payment_history.at(-1)).toEqual({
      ...pending.payment_history[0],
      transaction_type: 'refund',
    });
    expect(
      state.call('cancel_pending_order', {
        order_id: pending.order_id,
        reason: 'no longer needed',
      }),
    ).toEqual({ kind: 'error', message: 'Error: non-pending order cannot be cancelled' });
  });

  it('modify_pending_order_payment moves the payment and debits a gift card with rounding', () => {
    const state = memoryState();
    const card = giftCardOf(pending.user_id);
    const amount = pending.payment_history[0]?.amount ?? 0;
    const current = pending.payment_history[0]?.payment_method_id ?? '';
    expect(
      state.call('modify_pending_order_payment', {
        order_id: pending.order_id,
        payment_method_id: 'paypal_0',
      }),
    ).toEqual({ kind: 'error', message: 'Error: payment method not found' });
    expect(
      state.call('modify_pending_order_payment', {
        order_id: pending.order_id,
        payment_method_id: current,
      }),
    ).toEqual({
      kind: 'error',
      message: 'Error: the new payment method should be different from the current one',
    });
    const result = state.call('modify_pending_order_payment', {
      order_id: pending.order_id,
      payment_method_id: card?.id,
    });
    if ((card?.balance ?? 0) < amount) {
      expect(result).toEqual({
        kind: 'error',
        message: 'Error: insufficient gift card balance to pay for the order',
      });
      return;
    }
    expect(result?.kind).toBe('written');
    expect(state.view.order(pending.order_id)?.payment_history.slice(1)).toEqual([
      { transaction_type: 'payment', amount, payment_method_id: card?.id },
      { transaction_type: 'refund', amount, payment_method_id: current },
    ]);
    expect(state.view.user(pending.user_id)?.payment_methods[card?.id ?? '']?.balance).toBe(
      pyRound2((card?.balance ?? 0) - amount),
    );
    expect(
      state.call('modify_pending_order_payment', {
        order_id: pending.order_id,
        payment_method_id: current,
      }),
    ).toEqual({
      kind: 'error',
      message: 'Error: there should be exactly one payment for a pending order',
    });
  });

  it('modify_pending_order_items checks items, counts, variants and pays the unrounded difference', () => {
    const state = memoryState();
    const item = pending.items[0];
    const product = base.products[item?.product_id ?? ''];
    const variant = Object.values(product?.variants ?? {}).find(
      (v) => v.available && v.item_id !== item?.item_id,
    );
    const method = pending.payment_history[0]?.payment_method_id ?? '';
    const args = {
      order_id: pending.order_id,
      item_ids: [item?.item_id],
      new_item_ids: [variant?.item_id],
      payment_method_id: method,
    };
    expect(state.call('modify_pending_order_items', { ...args, item_ids: ['0'] })).toEqual({
      kind: 'error',
      message: 'Error: 0 not found',
    });
    expect(state.call('modify_pending_order_items', { ...args, new_item_ids: [] })).toEqual({
      kind: 'error',
      message: 'Error: the number of items to be exchanged should match',
    });
    expect(state.call('modify_pending_order_items', { ...args, new_item_ids: ['0'] })).toEqual({
      kind: 'error',
      message: 'Error: new item 0 not found or available',
    });
    expect(state.call('modify_pending_order_items', { ...args, payment_method_id: 'x' })).toEqual({
      kind: 'error',
      message: 'Error: payment method not found',
    });
    expect(state.call('modify_pending_order_items', args)?.kind).toBe('written');
    const order = state.view.order(pending.order_id);
    const difference = (variant?.price ?? 0) - (item?.price ?? 0);
    expect(order?.status).toBe('pending (item modified)');
    expect(order?.items[0]).toEqual({
      ...item,
      item_id: variant?.item_id,
      price: variant?.price,
      options: variant?.options,
    });
    expect(order?.payment_history.at(-1)).toEqual({
      transaction_type: difference > 0 ? 'payment' : 'refund',
      amount: Math.abs(difference),
      payment_method_id: method,
    });
    expect(state.call('modify_pending_order_items', args)).toEqual({
      kind: 'error',
      message: 'Error: non-pending order cannot be modified',
    });
  });

  it("addresses: a pending order's and a user's are replaced; others are refused", () => {
    const state = memoryState();
    const address = {
      address1: '1 Main St',
      address2: '',
      city: 'Austin',
      state: 'TX',
      country: 'USA',
      zip: '78701',
    };
    expect(
      state.call('modify_pending_order_address', { order_id: delivered.order_id, ...address }),
    ).toEqual({ kind: 'error', message: 'Error: non-pending order cannot be modified' });
    expect(
      state.call('modify_pending_order_address', { order_id: pending.order_id, ...address })?.kind,
    ).toBe('written');
    expect(state.view.order(pending.order_id)?.address).toEqual(address);
    expect(state.view.order(pending.order_id)?.status).toBe('pending');
    expect(state.call('modify_user_address', { user_id: 'nobody', ...address })).toEqual({
      kind: 'error',
      message: 'Error: user not found',
    });
    expect(state.call('modify_user_address', { user_id: pending.user_id, ...address })?.kind).toBe(
      'written',
    );
    expect(state.view.user(pending.user_id)?.address).toEqual(address);
  });

  it('return_delivered_order_items allows the original method or a gift card and sorts the items', () => {
    const state = memoryState();
    const ids = delivered.items
      .map((item) => item.item_id)
      .slice(0, 2)
      .reverse();
    const original = delivered.payment_history[0]?.payment_method_id ?? '';
    const other = otherMethod(delivered);
    expect(
      state.call('return_delivered_order_items', {
        order_id: pending.order_id,
        item_ids: ids,
        payment_method_id: original,
      }),
    ).toEqual({ kind: 'error', message: 'Error: non-delivered order cannot be returned' });
    if (other !== undefined) {
      expect(
        state.call('return_delivered_order_items', {
          order_id: delivered.order_id,
          item_ids: ids,
          payment_method_id: other,
        }),
      ).toEqual({
        kind: 'error',
        message:
          'Error: payment method should be either the original payment method or a gift card',
      });
    }
    expect(
      state.call('return_delivered_order_items', {
        order_id: delivered.order_id,
        item_ids: [...ids, ...ids, ...ids],
        payment_method_id: original,
      }),
    ).toEqual({ kind: 'error', message: 'Error: some item not found' });
    expect(
      state.call('return_delivered_order_items', {
        order_id: delivered.order_id,
        item_ids: ids,
        payment_method_id: original,
      })?.kind,
    ).toBe('written');
    const order = state.view.order(delivered.order_id);
    expect(order?.status).toBe('return requested');
    expect(order?.return_items).toEqual([...ids].sort());
    expect(order?.payment_history).toEqual(delivered.payment_history);
  });

  it('exchange_delivered_order_items records the rounded difference and changes no payment', () => {
    const state = memoryState();
    const item = delivered.items[0];
    const product = base.products[item?.product_id ?? ''];
    const variant = Object.values(product?.variants ?? {}).find(
      (v) => v.available && v.item_id !== item?.item_id,
    );
    const method = delivered.payment_history[0]?.payment_method_id ?? '';
    const args = {
      order_id: delivered.order_id,
      item_ids: [item?.item_id],
      new_item_ids: [variant?.item_id],
      payment_method_id: method,
    };
    expect(
      state.call('exchange_delivered_order_items', { ...args, order_id: pending.order_id }),
    ).toEqual({ kind: 'error', message: 'Error: non-delivered order cannot be exchanged' });
    expect(state.call('exchange_delivered_order_items', args)?.kind).toBe('written');
    const order = state.view.order(delivered.order_id);
    expect(order?.status).toBe('exchange requested');
    expect(order?.exchange_price_difference).toBe(
      pyRound2((variant?.price ?? 0) - (item?.price ?? 0)),
    );
    expect(order?.items).toEqual(delivered.items);
    expect(order?.payment_history).toEqual(delivered.payment_history);
  });
});

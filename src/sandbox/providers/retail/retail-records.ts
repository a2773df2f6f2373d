/**
 * The record shapes of the τ-bench retail data (users, orders, products) and the view of state
 * its tools read. Amounts are floating-point dollars, exactly as in the benchmark.
 */
import type { JsonRecord } from '../../sandbox-types.js';

/** A postal address; every field is a string. */
export interface RetailAddress {
  address1: string;
  address2: string;
  city: string;
  state: string;
  country: string;
  zip: string;
}

/** A payment method; `balance` only on gift cards. */
export interface RetailPaymentMethod {
  source: string;
  id: string;
  balance?: number;
  brand?: string;
  last_four?: string;
}

export interface RetailUser {
  name: { first_name: string; last_name: string };
  address: RetailAddress;
  email: string;
  payment_methods: Record<string, RetailPaymentMethod>;
  orders: string[];
}

export interface RetailOrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
}

export interface RetailPayment {
  transaction_type: 'payment' | 'refund';
  amount: number;
  payment_method_id: string;
}

export interface RetailOrder {
  order_id: string;
  user_id: string;
  address: RetailAddress;
  items: RetailOrderItem[];
  fulfillments: { tracking_id: string[]; item_ids: string[] }[];
  status: string;
  payment_history: RetailPayment[];
  cancel_reason?: string;
  return_items?: string[];
  return_payment_method_id?: string;
  exchange_items?: string[];
  exchange_new_items?: string[];
  exchange_payment_method_id?: string;
  exchange_price_difference?: number;
}

export interface RetailVariant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}

export interface RetailProduct {
  name: string;
  product_id: string;
  variants: Record<string, RetailVariant>;
}

/** What the tools read: records by id (never mutated in place) and the user list in order. */
export interface RetailView {
  user(id: string): RetailUser | undefined;
  order(id: string): RetailOrder | undefined;
  product(id: string): RetailProduct | undefined;
  /** Users as `[id, user]` in dataset order (finding a user returns the first match). */
  users(): readonly (readonly [string, RetailUser])[];
  products(): readonly RetailProduct[];
}

/** The benchmark's rule: a payment method is a gift card when its id contains `gift_card`. */
export function isGiftCard(paymentMethodId: string): boolean {
  return paymentMethodId.includes('gift_card');
}

/** A deep copy of a record as a mutable value (the tools change copies, never state). */
export function copyOf<T>(record: T): T {
  return structuredClone(record);
}

/** A typed record as the sandbox stores it. */
export function asJsonRecord(value: RetailUser | RetailOrder | RetailProduct): JsonRecord {
  return value as unknown as JsonRecord;
}

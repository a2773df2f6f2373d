/**
 * The synthetic world the seeded providers share: customers, and orders paid by one charge
 * each. Ids are fixed (so docs and tests can name them); names, items and amounts follow the seed.
 */
import { createSeededRandom, pick } from './seeded-random.js';

/** A synthetic customer. */
export interface CatalogueCustomer {
  readonly id: string;
  readonly name: string;
  readonly email: string;
}

/** One line of an order; amounts in integer minor units. */
export interface CatalogueLineItem {
  readonly sku: string;
  readonly name: string;
  readonly quantity: number;
  readonly unitAmountMinor: number;
  readonly amountMinor: number;
}

/** A synthetic order, paid in full by `chargeId` through `paymentIntentId`. */
export interface CatalogueOrder {
  readonly id: string;
  readonly number: number;
  readonly customerId: string;
  readonly currency: 'usd';
  readonly lineItems: readonly CatalogueLineItem[];
  readonly totalAmountMinor: number;
  readonly chargeId: string;
  readonly paymentIntentId: string;
  /** Seconds since the epoch. */
  readonly createdSeconds: number;
  /** Amount already refunded in the seed (minor units): order 5 partly, order 6 fully. */
  readonly seededRefundMinor: number;
}

/** The whole seeded world. */
export interface SeedCatalogue {
  readonly customers: readonly CatalogueCustomer[];
  readonly orders: readonly CatalogueOrder[];
}

const firstNames = [
  'Ada',
  'Bram',
  'Chioma',
  'Dev',
  'Elif',
  'Farah',
  'Goran',
  'Hana',
  'Iker',
  'Jun',
];
const lastNames = [
  'Okafor',
  'Lindqvist',
  'Moreau',
  'Tanaka',
  'Silva',
  'Novak',
  'Haddad',
  'Kowalski',
];
const products = [
  { sku: 'SKU-MUG', name: 'Ceramic mug', baseMinor: 1800 },
  { sku: 'SKU-TEE', name: 'Cotton t-shirt', baseMinor: 2500 },
  { sku: 'SKU-TOTE', name: 'Canvas tote', baseMinor: 3200 },
  { sku: 'SKU-LAMP', name: 'Desk lamp', baseMinor: 5400 },
  { sku: 'SKU-PHONES', name: 'Headphones', baseMinor: 8900 },
  { sku: 'SKU-KEYS', name: 'Mechanical keyboard', baseMinor: 12900 },
] as const;

/** Seconds since the epoch of 2026-01-05T10:00:00Z: seed objects are dated from here. */
export const seedEpochSeconds = 1_767_607_200;

/** Number of seeded customers (`cus_sg_001` …). */
export const seedCustomerCount = 5;
/** Number of seeded orders (`ord_1001` …), each with `pi_sg_00N` and `ch_sg_00N`. */
export const seedOrderCount = 6;

/** Builds the catalogue for `seed`; pure and deterministic. */
export function buildSeedCatalogue(seed: number): SeedCatalogue {
  const random = createSeededRandom(seed);
  const customers: CatalogueCustomer[] = [];
  for (let index = 1; index <= seedCustomerCount; index += 1) {
    const first = pick(random, firstNames);
    const last = pick(random, lastNames);
    customers.push({
      id: `cus_sg_${pad(index)}`,
      name: `${first} ${last}`,
      email: `${first}.${last}.${index}@example.test`.toLowerCase(),
    });
  }
  const orders: CatalogueOrder[] = [];
  for (let index = 1; index <= seedOrderCount; index += 1) {
    const itemCount = 1 + Math.floor(random() * 3);
    const lineItems: CatalogueLineItem[] = [];
    const used = new Set<string>();
    while (lineItems.length < itemCount) {
      const product = pick(random, products);
      if (used.has(product.sku)) continue;
      used.add(product.sku);
      const quantity = 1 + Math.floor(random() * 2);
      const unitAmountMinor = product.baseMinor + Math.floor(random() * 10) * 100;
      lineItems.push({
        sku: product.sku,
        name: product.name,
        quantity,
        unitAmountMinor,
        amountMinor: quantity * unitAmountMinor,
      });
    }
    const totalAmountMinor = lineItems.reduce((sum, item) => sum + item.amountMinor, 0);
    const firstItem = lineItems[0]?.unitAmountMinor ?? 0;
    orders.push({
      id: `ord_${1000 + index}`,
      number: 1000 + index,
      customerId: `cus_sg_${pad(((index - 1) % seedCustomerCount) + 1)}`,
      currency: 'usd',
      lineItems,
      totalAmountMinor,
      chargeId: `ch_sg_${pad(index)}`,
      paymentIntentId: `pi_sg_${pad(index)}`,
      createdSeconds: seedEpochSeconds + index * 86_400,
      seededRefundMinor:
        index === 5
          ? Math.min(firstItem, totalAmountMinor - 100)
          : index === 6
            ? totalAmountMinor
            : 0,
    });
  }
  return { customers, orders };
}

function pad(index: number): string {
  return String(index).padStart(3, '0');
}

/**
 * The built-in providers by name. Adding a provider is adding a folder under `providers/` that
 * exports a `ProviderDefinition`, and one line here.
 */
import type { ProviderDefinition, ProviderName } from '../sandbox-types.js';
import { crmProvider } from './crm/crm-provider.js';
import { issuesProvider } from './issues/issues-provider.js';
import { ordersProvider } from './orders/orders-provider.js';
import { paymentsProvider } from './payments/payments-provider.js';
import { retailProvider } from './retail/retail-provider.js';

/** Built-in providers, in the order they are served and seeded. */
export const builtInProviders: Readonly<Record<ProviderName, ProviderDefinition>> = {
  payments: paymentsProvider,
  crm: crmProvider,
  issues: issuesProvider,
  orders: ordersProvider,
  retail: retailProvider,
};

/**
 * The providers a sandbox serves when none are named. `retail` (the τ-bench retail world, a
 * 2.5 MB seed) is opt-in: name it in `providers`.
 */
export const defaultProviderNames: readonly ProviderName[] = [
  'payments',
  'crm',
  'issues',
  'orders',
];

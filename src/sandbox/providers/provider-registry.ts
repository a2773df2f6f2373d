/**
 * The built-in providers by name. Adding a provider is adding a folder under `providers/` that
 * exports a `ProviderDefinition`, and one line here.
 */
import type { ProviderDefinition, ProviderName } from '../sandbox-types.js';
import { crmProvider } from './crm/crm-provider.js';
import { issuesProvider } from './issues/issues-provider.js';
import { ordersProvider } from './orders/orders-provider.js';
import { paymentsProvider } from './payments/payments-provider.js';

/** Built-in providers, in the order they are served and seeded. */
export const builtInProviders: Readonly<Record<ProviderName, ProviderDefinition>> = {
  payments: paymentsProvider,
  crm: crmProvider,
  issues: issuesProvider,
  orders: ordersProvider,
};

/**
 * `sideguard/sandbox`: stateful, provider-shaped HTTP APIs with faults at the commit point and a
 * private control plane. Independent of the guard: it imports only the shared error classes.
 */
export {
  SandboxControlClient,
  type SandboxControlClientConfig,
  type SandboxHealth,
} from './control-client.js';
export { controlBodyLimitBytes } from './control-plane.js';
export { defaultBodyLimitBytes, reservedHeaderPrefix } from './data-plane.js';
export {
  decideFault,
  type FaultDecision,
  FaultKind,
  type FaultPlan,
  type FaultRule,
  type FaultSpec,
  faultPlanSchema,
  faultSchedule,
  parseFaultPlan,
  parseFaultPlanJson,
} from './fault-plan.js';
export { hashApiKey, type IdentityDecision, KeyTable, type SandboxApiKey } from './identity.js';
export {
  countWrites,
  type FaultTraceEntry,
  type InFlightRequest,
  RequestDecision,
  type RequestFacts,
  type RequestObservation,
  RequestPhase,
  ResponseDelivery,
  type SandboxObservations,
  type WriteCounts,
  WriteOutcome,
} from './observations.js';
export { crmEffectProperty, crmProvider } from './providers/crm/crm-provider.js';
export { issuesEffectField, issuesProvider } from './providers/issues/issues-provider.js';
export { ordersProvider } from './providers/orders/orders-provider.js';
export {
  paymentsEffectMetadataKey,
  paymentsProvider,
  RefundReason,
} from './providers/payments/payments-provider.js';
export { builtInProviders, defaultProviderNames } from './providers/provider-registry.js';
export { pyRound2 } from './providers/retail/py-round.js';
export { retailEffectKey } from './providers/retail/retail-operations.js';
export {
  type RetailToolName,
  retailProvider,
  retailToolArguments,
  retailWriteTools,
} from './providers/retail/retail-provider.js';
export { SandboxConfigError, SandboxControlError } from './sandbox-errors.js';
export {
  type HeldRequest,
  type HoldOutcome,
  IdempotencyMode,
  idempotencyCollection,
  type SandboxExport,
} from './sandbox-runtime.js';
export {
  AuthFailure,
  type DefaultApiKey,
  defineOperation,
  type ExecuteContext,
  type ExecuteResult,
  type IdempotencySupport,
  type JsonRecord,
  type JsonValue,
  type OperationDefinition,
  OperationKind,
  type ParseResult,
  type ProviderDefinition,
  type ProviderErrorShapes,
  ProviderName,
  type ProviderRequest,
  type ProviderResponse,
  type ReceiptDraft,
  type StateChange,
} from './sandbox-types.js';
export {
  buildSeedCatalogue,
  type CatalogueCustomer,
  type CatalogueLineItem,
  type CatalogueOrder,
  type SeedCatalogue,
  seedCustomerCount,
  seedOrderCount,
} from './seed-catalogue.js';
export {
  ControlTokenSource,
  controlTokenEnvironmentVariable,
  type StartSandboxOptions,
} from './start-options.js';
export { type RunningSandbox, startSandbox } from './start-sandbox.js';
export {
  defaultSandboxSeed,
  type ProvidersState,
  SandboxDurability,
  type SandboxReceipt,
} from './state-store.js';

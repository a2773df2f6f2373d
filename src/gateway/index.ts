/**
 * `sideguard/gateway`: put the guard on an agent's real call path. Load a `sideguard.config.ts`,
 * decide every call with one function (HTTP and MCP doors alike), run bound writes through the
 * guard, and serve the HTTP front door. Loads Hono, the SQLite or PostgreSQL driver (for the
 * configured store only) and `@opentelemetry/api`; the root entry `sideguard` loads none of them.
 */

export {
  type GatewayNotifications,
  openGatewayNotifications,
} from '../notify/gateway-notifications.js';
export { type Notice, NoticeType } from '../notify/notice.js';
export {
  type VerifyWebhookSignatureOptions,
  verifyWebhookSignature,
  type WebhookSignatureVerdict,
  webhookSignatureHeader,
} from '../notify/webhook-signature.js';
export { authenticateAgent, hashAgentKey, presentedKey } from './agent-identity.js';
export {
  type CompileResult,
  compileGatewayConfig,
  GatewayConfigError,
} from './config-compile.js';
export {
  DEFAULT_CONFIG_FILES,
  type LoadedGatewayConfig,
  loadGatewayConfig,
  locateConfigFile,
} from './config-loader.js';
export type { ConfigProblem } from './config-schema.js';
export type {
  AgentConfig,
  BindingConfig,
  BindingVerifyContext,
  BoundHttpRequest,
  DenyRuleConfig,
  GatewayConfig,
  GatewaySandboxConfig,
  GatewayServerConfig,
  HttpMount,
  HttpReadBindingConfig,
  HttpUpstreamConfig,
  HttpWriteBindingConfig,
  McpToolBindingConfig,
  McpTransportConfig,
  McpUpstreamConfig,
  RoleConfig,
  SandboxProviderName,
  UpstreamClient,
  UpstreamConfig,
  UpstreamReply,
  UpstreamRequestSpec,
  UpstreamResponse,
} from './config-types.js';
export { defineConfig, UpstreamMode } from './config-types.js';
export {
  type AgentIdentity,
  type CallMatch,
  type CallSubject,
  type Decision,
  type DecisionState,
  decideCall,
  matchCall,
  mayUse,
  stateNeeded,
  type WriteDecision,
} from './decide-call.js';
export {
  createDecisionLog,
  type DecisionLog,
  type DecisionLogOptions,
  endDecisionSpan,
  type GatewayDecisionEvent,
  startDecisionSpan,
} from './decision-log.js';
export {
  DecisionKind,
  DecisionReason,
  GUARDED_VERDICT_CODE,
  GuardedVerdict,
  type RefusalReason,
} from './decision-vocabulary.js';
export {
  type CapturedExecution,
  createExecutionCapture,
  type ExecutionCapture,
} from './execution-capture.js';
export {
  describeGatewayStore,
  type GatewayRuntime,
  type GatewayRuntimeOptions,
  type GatewayStoreLocation,
  type HttpUpstreamRuntime,
  keyRingFromEnvironment,
  loadReplayBook,
  openGatewayRuntime,
  openGatewayStores,
  parseGatewayStore,
} from './gateway-runtime.js';
export {
  type GatewayApp,
  type GatewayExtension,
  type GatewayListener,
  type RunningGateway,
  type StartGatewayServerOptions,
  startGatewayServer,
} from './gateway-server.js';
export type {
  CompiledAgent,
  CompiledBinding,
  CompiledHttpBinding,
  CompiledToolBinding,
  CompiledUpstream,
  GatewayTable,
} from './gateway-table.js';
export {
  type GuardedCallContext,
  type GuardedCallRequest,
  type GuardedCallResult,
  runGuardedCall,
  runShadowWrite,
  type ShadowWriteResult,
  verdictOf,
} from './guarded-call.js';
export { type HttpCall, handleHttpCall } from './http-door.js';
export { problemResponse, REFUSAL_STATUS } from './http-problems.js';
export {
  jsonOutput,
  MAX_RECORDED_BODY_BYTES,
  parseRecordedResponse,
  type RecordedResponse,
  responseOutput,
} from './recorded-response.js';
export {
  exportReplayCases,
  exportShadowState,
  parseReplayCases,
  ReplayBook,
  type ReplayCase,
  resourceKey,
} from './rehearsal-state.js';
export { type ServedGateway, type ServeGatewayOptions, serveGateway } from './serve-gateway.js';
export type {
  GatewayStateStore,
  ReplayCaseRecord,
  ShadowWriteRecord,
} from './state/gateway-state.js';
export { createMemoryGatewayState } from './state/memory-gateway-state.js';
export {
  type RunningSweeper,
  type SweepOptions,
  type SweepSummary,
  startSweeper,
  sweepOnce,
} from './sweeper.js';
export { createUpstreamTransport, type UpstreamTransport } from './upstream-transport.js';

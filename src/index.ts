/**
 * The public API of `sideguard`. Every export is named here on purpose: adding a name makes it
 * public. Importing this entry loads no database driver, HTTP server or agent SDK; stores and
 * the sandbox have their own entries (`sideguard/sqlite`, `sideguard/postgres`,
 * `sideguard/sandbox`, `sideguard/testing`), and so does the gateway (`sideguard/gateway`): only
 * its config types and `defineConfig` live here.
 */
export type {
  ActionConfig,
  ActionDefinition,
  ActionInput,
  ActionType,
  ApprovalRule,
  Authority,
  CompensateContext,
  CompensateResult,
  EffectKind,
  ExecuteContext,
  ExecuteResult,
  ExecutionItem,
  PolicyContext,
  PolicyVerdict,
  ProposalContext,
  ResolveResult,
  VerifyContext,
  VerifyResult,
} from './core/action.js';
export { approvals, defineAction, formatActionType } from './core/action.js';
export type { JsonValue } from './core/canonical-json.js';
export { canonicalBytes, canonicalize } from './core/canonical-json.js';
export type { ManualClock } from './core/clock.js';
export { createManualClock, createSequentialIds } from './core/clock.js';
export type { Commitment } from './core/commitment.js';
export { computeCommitment, keyedDigest, verifyCommitment } from './core/commitment.js';
export type { SealedEnvelope } from './core/envelope.js';
export {
  AuthorityEvidenceError,
  ConfigurationError,
  ContractViolationError,
  isSideguardError,
  ProposalNotFoundError,
  SideguardError,
  StoreInvariantError,
} from './core/errors.js';
export type {
  AuthorityEvidence,
  AuthorityTally,
  BuildEvidenceOptions,
  EvidenceBindings,
} from './core/evidence.js';
export { buildAuthorityEvidence, EvidenceRejection, evidenceDigest } from './core/evidence.js';
export { StoreTampering } from './core/guard/store-tampering.js';
export type {
  Clock,
  ContractIssue,
  DryRunPrediction,
  Guard,
  GuardEvent,
  GuardEventSink,
  GuardResult,
  Ids,
  OperatorFinding,
  PrepareOptions,
  ProposalAddress,
  ProposalView,
  ReaderAddress,
  RecordAuthorityOptions,
  ResolveOutcomeOptions,
  Scheduler,
} from './core/guard.js';
export type { KeyMaterial, KeyReference, KeyRing, KeyRingConfig } from './core/key-ring.js';
export {
  createDevelopmentKeyRing,
  createKeyRing,
  keyRingFromEnvironmentValue,
} from './core/key-ring.js';
export type {
  LedgerEvent,
  LedgerEventDraft,
  LedgerHead,
  LedgerVerification,
  ProposalReplay,
} from './core/ledger.js';
export {
  GENESIS_HASH,
  hashLedgerEvent,
  LedgerFailureReason,
  ledgerToJsonl,
  parseLedgerEvent,
  replayProposal,
  verifyLedgerChain,
} from './core/ledger.js';
export type { LedgerAnchor } from './core/ledger-anchor.js';
export { readLedgerAnchor } from './core/ledger-anchor.js';
export type { RecordMac } from './core/record-mac.js';
export { checkRecordMac, RecordMacVerdict } from './core/record-mac.js';
export type {
  AuthorityEvidenceRecord,
  CommitDurability,
  DueQuery,
  EffectClaim,
  GuardStore,
  LedgerQuery,
  ProposalListPosition,
  ProposalListQuery,
  ProposalRecord,
  Receipt,
  StoreCommit,
  StoreCommitResult,
} from './core/store.js';
export { assertCommitShape, checkEffectClaim, checkProposalWrite } from './core/store-rules.js';
export {
  ChannelAssurance,
  isAllowedTransition,
  LedgerEventType,
  Outcome,
  PolicyDecision,
  ProposalStatus,
  TRANSITIONS,
} from './core/vocabulary.js';
export type { GuardConfig } from './create-guard.js';
export { createGuard } from './create-guard.js';
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
  McpBindingVerifyContext,
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
  UpstreamToolCaller,
  UpstreamToolReply,
  UpstreamToolResult,
} from './gateway/config-types.js';
export { defineConfig, UpstreamMode } from './gateway/config-types.js';
export { createMemoryStore } from './stores/memory/memory-store.js';
export {
  type CheckedProposalListQuery,
  checkProposalListQuery,
  PROPOSAL_LIST_LIMITS,
} from './stores/store-queries.js';
export type {
  ExpectedHead,
  LedgerLinesVerdict,
  LedgerTenantHead,
  VerifyLedgerOptions,
} from './verify/ledger-lines.js';
export {
  LedgerFileFailure,
  parseExpectedHead,
  verifyLedgerLines,
} from './verify/ledger-lines.js';

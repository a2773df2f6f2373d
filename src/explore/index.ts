/**
 * `sideguard/explore`: the deterministic fault-schedule explorer. Explore built-in workloads or
 * your own declared actions against a provider model, replay recorded schedules, and keep
 * failing seeds as regression tests. Test and CI tooling: it installs the simulation traps.
 */
export type { BreakageLayer, CataloguedBreakage } from './breakage-catalogue.js';
export { BREAKAGE_CATALOGUE, NOT_CAUGHT_ALONE } from './breakage-catalogue.js';
export { ChoiceTape } from './choice-tape.js';
export {
  ActorKind,
  ExplorerBreakage,
  InvariantId,
  ReadFault,
  StepEvent,
  WorkloadName,
  WriteFault,
} from './explore-vocabulary.js';
export type {
  ExploreFailure,
  ExploreOptions,
  ExploreProgress,
  ExploreReport,
} from './explorer.js';
export { explore, replayRecorded, runAndCheck } from './explorer.js';
export type { FailureArtifacts } from './failure-artifacts.js';
export { regressionTestSource, timelineOf, writeFailureArtifacts } from './failure-artifacts.js';
export type { OpenFinding } from './open-findings.js';
export { FaultTrigger, OPEN_FINDINGS, openTriggers } from './open-findings.js';
export type {
  AppliedWrite,
  ModelObject,
  ModelReply,
  ProviderModelConfig,
  ReadRequest,
  RequestRecord,
  Transport,
  WriteRequest,
} from './provider-model.js';
export { ProviderModel } from './provider-model.js';
export type { ReplayFile } from './replay-file.js';
export {
  expectedOutcome,
  formatReplayFile,
  parseReplayFile,
  REPLAY_FILE_SCHEMA,
  readReplayFile,
} from './replay-file.js';
export type { InputBinding, ScheduleEvidence, Violation } from './schedule-evidence.js';
export type { ScheduleOptions, ScheduleRun } from './simulation.js';
export { KNOWN_BREAKAGES, runSchedule } from './simulation.js';
export type { SqliteTier } from './sqlite-tier.js';
export { createSqliteTier, ExploreStoreTier } from './sqlite-tier.js';
export type { WorkloadDefinition } from './workloads/workload-kit.js';
export {
  agentAttempt,
  drawApprover,
  spawnAgent,
  spawnApprover,
  spawnCompensator,
  spawnSweeper,
} from './workloads/workload-kit.js';
export type { AgentRequest, World } from './world.js';

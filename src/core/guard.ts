/**
 * The guard runtime: prepare → authority → execute (claim, lease) → verify/reconcile →
 * compensate, with every decision sealed into the ledger in the same commit as its status.
 * Pure: the store, key ring, clock, ids and randomness are injected. Each lifecycle stage lives
 * in its own module under `./guard/`; this file only assembles them.
 */
import { recordAuthority } from './guard/authority.js';
import { compensateProposal } from './guard/compensate.js';
import { executeProposal, insertClaimedAndRun } from './guard/execute.js';
import { expireDue } from './guard/expiry.js';
import { createGuardContext } from './guard/guard-context.js';
import type { Guard, GuardCoreConfig } from './guard/guard-types.js';
import {
  exportLedger,
  exportLedgerChunks,
  replayFromLedger,
  verifyLedger,
} from './guard/ledger-access.js';
import { resolveOutcome } from './guard/operator-resolution.js';
import { prepareProposal } from './guard/prepare.js';
import { eraseProposal, readProposal } from './guard/read-erase.js';
import { reconcileProposal, resumeVerification, sweepDue } from './guard/reconcile.js';

export type {
  Clock,
  ContractIssue,
  DryRunPrediction,
  Guard,
  GuardCoreConfig,
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
} from './guard/guard-types.js';

/** Builds the runtime. Prefer the public `createGuard`, which fills defaults. */
export function createGuardCore(config: GuardCoreConfig): Guard {
  const context = createGuardContext(config);
  return {
    prepare: (action, options) => prepareProposal(context, action, options),
    recordAuthority: (action, options) => recordAuthority(context, action, options),
    execute: (action, address) => executeProposal(context, action, address),
    reconcile: (action, address) => reconcileProposal(context, action, address),
    resumeVerification: (action, address) => resumeVerification(context, action, address),
    compensate: (action, address) => compensateProposal(context, action, address),
    expireDue: (action, address) => expireDue(context, action, address),
    sweep: (action, options) => sweepDue(context, action, options),
    resolveOutcome: (action, options) => resolveOutcome(context, action, options),
    read: (action, address) => readProposal(context, action, address),
    erase: (action, address) => eraseProposal(context, action, address),
    run: async (action, options) => {
      // An allowed fresh proposal is inserted already claimed (one commit, decision 124); the
      // answer is then the execution's, whatever status it left.
      let executed = false;
      const prepared = await prepareProposal(
        context,
        action,
        { ...options, mode: 'commit' },
        undefined,
        async (record, events, listed) => {
          const result = await insertClaimedAndRun(context, action, record, events, listed);
          executed = result !== undefined;
          return result;
        },
      );
      if (executed || prepared.status !== 'authorized') return prepared;
      return executeProposal(context, action, {
        tenant: options.tenant,
        proposal: prepared.proposal,
      });
    },
    exportLedger: (options) => exportLedger(context, options),
    exportLedgerChunks: (options) => exportLedgerChunks(context, options),
    verifyLedger: (options) => verifyLedger(context, options),
    replay: (address) => replayFromLedger(context, address),
  };
}

/**
 * Checks the authority evidence the store kept against what the ledger recorded: each
 * `authority_recorded` event's digest must name evidence that hashes to it, and that evidence
 * must bind this tenant, proposal, action, effect, proposal commitment and audience, and say what
 * the event says (authority, decision, expiry). A mismatch means evidence that should have been
 * refused was counted.
 */
import { canonicalize, type JsonValue } from '../../core/canonical-json.js';
import { type AuthorityEvidence, evidenceDigest } from '../../core/evidence.js';
import type { LedgerEvent, ProposalReplay } from '../../core/ledger.js';
import type { EvidenceModel } from '../evidence-model.js';

type Binding = readonly [name: string, expected: JsonValue | undefined, presented: unknown];

/** Equal as canonical JSON (key order does not matter); anything unencodable is unequal. */
function same(a: unknown, b: unknown): boolean {
  try {
    return canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
}

function digestOf(evidence: unknown): string | undefined {
  try {
    return evidenceDigest(evidence as AuthorityEvidence);
  } catch {
    return undefined;
  }
}

/** The proposal commitment evidence must bind: the ledger's, if it records one, else the store's. */
export function commitmentOf(model: EvidenceModel, replay: ProposalReplay): JsonValue | undefined {
  for (const event of replay.events) {
    if (event.data.proposalCommitment !== undefined) return event.data.proposalCommitment;
  }
  const stored = model.recordOf.get(replay.proposal)?.commitment;
  return stored === null || stored === undefined ? undefined : { ...stored };
}

/** The ledger's value for a proposal field, from the first event that records it. */
function ledgerValue(replay: ProposalReplay, field: string): JsonValue | undefined {
  for (const event of replay.events) {
    if (event.data[field] !== undefined) return event.data[field] as JsonValue;
  }
  return undefined;
}

/**
 * Where the store's record of a proposal disagrees with what the hash-chained ledger recorded
 * about it (its commitment, or its expiry): the record was changed after the ledger was written.
 */
export function storeRecordDisagreement(
  model: EvidenceModel,
  replay: ProposalReplay,
  field: 'commitment' | 'expiresAt',
): string[] {
  const record = model.recordOf.get(replay.proposal);
  if (record === undefined) return [];
  const recorded = ledgerValue(
    replay,
    field === 'commitment' ? 'proposalCommitment' : 'proposalExpiresAt',
  );
  const stored = record[field];
  if (recorded === undefined || stored === null || stored === undefined) return [];
  if (same(recorded, field === 'commitment' ? { ...(stored as object) } : stored)) return [];
  const name = field === 'commitment' ? 'commitment' : 'expiry';
  return [
    `the store's record of ${replay.proposal} holds another ${name} than the ledger recorded (the record was edited after the ledger was written)`,
  ];
}

/** Problems with the evidence behind one `authority_recorded` event (empty when it binds). */
export function bindingProblems(
  model: EvidenceModel,
  replay: ProposalReplay,
  recorded: LedgerEvent,
): string[] {
  const digest = String(recorded.data.evidenceDigest);
  const who = `${String(recorded.data.authority)}'s ${String(recorded.data.decision)} of ${replay.proposal}`;
  const stored = model.storedEvidence?.get(digest);
  if (model.storedEvidence === null) return [];
  if (stored === undefined) {
    return [`the evidence behind ${who} (digest ${digest.slice(0, 12)}…) is not in the store`];
  }
  if (digestOf(stored.evidence) !== digest) {
    return [`the store's evidence behind ${who} does not hash to the digest the ledger recorded`];
  }
  const evidence = stored.evidence as Record<string, unknown>;
  const bindings: Binding[] = [
    ['tenant', model.tenant, evidence.tenant],
    ['proposal', replay.proposal, evidence.proposal],
    ['action type', replay.actionType ?? undefined, evidence.actionType],
    ['effect key', model.effectOf(replay) ?? undefined, evidence.semanticEffectKey],
    ['proposal commitment', commitmentOf(model, replay), evidence.proposalCommitment],
    ['audience', model.audience ?? undefined, evidence.audience],
    ['authority', recorded.data.authority, evidence.authority],
    ['decision', recorded.data.decision, evidence.decision],
    ['expiry', recorded.data.expiresAt, evidence.expiresAt],
  ];
  return bindings
    .filter(([, expected, presented]) => expected !== undefined && !same(expected, presented))
    .map(([name]) => `${who} was counted although its evidence binds another ${name}`);
}

/**
 * Executions of an input other than the one proposed: each `commit_started` that records the
 * commitment of what it executed must name the proposal's commitment (a snapshot changed in the
 * store and used without its commitment check shows here).
 */
export function executedInputProblems(model: EvidenceModel, replay: ProposalReplay): string[] {
  const proposed = commitmentOf(model, replay);
  if (proposed === undefined) return [];
  return replay.events
    .filter((event) => event.type === 'commit_started' && event.data.inputCommitment !== undefined)
    .filter((event) => !same(event.data.inputCommitment, proposed))
    .map(
      (event) =>
        `${replay.proposal}'s commit_started at ${event.at} executed an input whose commitment is not the proposal's (the stored snapshot was changed)`,
    );
}

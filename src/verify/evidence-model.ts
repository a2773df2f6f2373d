/**
 * What the invariants judge, derived from the evidence files and nothing else, in terms that do
 * not depend on any one provider or action: the ledger replayed per proposal, the provider writes
 * (receipts) and write attempts (requests) the sandbox saw, the objects in provider state that
 * carry an effect, and what the ledger claims.
 */
import { type LedgerEvent, type ProposalReplay, replayProposal } from '../core/ledger.js';
import { builtInProviders } from '../sandbox/providers/provider-registry.js';
import type { JsonRecord } from '../sandbox/sandbox-types.js';
import type {
  SandboxReceiptEvidence,
  SandboxRequestEvidence,
  ScenarioEvidence,
  StoreRecordEvidence,
} from './evidence-files.js';

/** HTTP methods that can write. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** Ledger events whose data may name provider receipts (`{ id, provider }`). */
const RECEIPT_EVENTS: ReadonlySet<string> = new Set([
  'committed',
  'verification_observed',
  'partial_commit',
  'late_result_observed',
  'compensated',
  'compensation_required',
]);

/** An object in provider state that carries a semantic effect key. */
export interface EffectObject {
  readonly provider: string;
  readonly collection: string;
  readonly id: string;
  readonly effectKey: string;
}

/** Authority evidence as the store held it, keyed by its digest in the ledger. */
export interface StoredEvidence {
  readonly proposal: string;
  readonly evidenceDigest: string;
  /** The evidence exactly as presented (bindings only). */
  readonly evidence: unknown;
}

/** Everything an invariant may look at. */
export interface EvidenceModel {
  /** The tenant the run wrote under. */
  readonly tenant: string;
  /** The audience the guard's authority evidence must name, when the run recorded it. */
  readonly audience: string | null;
  /** The tenant's whole ledger, in sequence order. */
  readonly events: readonly LedgerEvent[];
  /** Each proposal's replay, by proposal id. */
  readonly replays: ReadonlyMap<string, ProposalReplay>;
  /** The receipts the sandbox issued: one per committed provider write. */
  readonly writes: readonly SandboxReceiptEvidence[];
  /** Every data-plane request the sandbox logged. */
  readonly requests: readonly SandboxRequestEvidence[];
  /** Objects in the exported provider state carrying an effect; `null` when the export has no state. */
  readonly effectObjects: readonly EffectObject[] | null;
  /** Ids of every object in the exported state, as `provider:id`; `null` without state. */
  readonly stateObjectIds: ReadonlySet<string> | null;
  /** Receipts the ledger claims, as `provider:id`. */
  readonly claimed: ReadonlySet<string>;
  /** `commit_started` events by the semantic effect of their proposal. */
  readonly startedByEffect: ReadonlyMap<string, readonly LedgerEvent[]>;
  readonly chain: ScenarioEvidence['chain'];
  readonly records: readonly StoreRecordEvidence[];
  /** The store's record of each proposal, by proposal id. */
  readonly recordOf: ReadonlyMap<string, StoreRecordEvidence>;
  /**
   * The authority evidence the store held, by digest; `null` when the export predates evidence
   * in the store records (nothing to check bindings against).
   */
  readonly storedEvidence: ReadonlyMap<string, StoredEvidence> | null;
  /** Values that must never appear in the ledger (I8). */
  readonly privateValues: readonly string[];
  /** The semantic effect key of a proposal, from its ledger events, or `null`. */
  effectOf(replay: ProposalReplay): string | null;
}

/** The semantic effect key a proposal's ledger events name, or `null`. */
export function effectOfReplay(replay: ProposalReplay): string | null {
  for (const event of replay.events) {
    const key = event.data.semanticEffectKey;
    if (typeof key === 'string') return key;
  }
  return null;
}

/** A compensation writes under its effect's key with this suffix; it belongs to that effect. */
export const baseEffect = (effect: string): string => effect.replace(/:compensation$/, '');

/** Builds the model from the evidence files; `privateValues` come from the scenario's case. */
export function buildEvidenceModel(
  evidence: ScenarioEvidence,
  privateValues: readonly string[],
): EvidenceModel {
  const { events, sandbox } = evidence;
  const replays = new Map<string, ProposalReplay>();
  for (const id of new Set(events.map((event) => event.proposal))) {
    if (id === null) continue;
    const replay = replayProposal(events, id);
    if (replay !== undefined) replays.set(id, replay);
  }
  const startedByEffect = new Map<string, LedgerEvent[]>();
  for (const replay of replays.values()) {
    const effect = effectOfReplay(replay);
    if (effect === null) continue;
    for (const event of replay.events) {
      if (event.type === 'commit_started') {
        startedByEffect.set(effect, [...(startedByEffect.get(effect) ?? []), event]);
      }
    }
  }
  const state = sandbox.state;
  const recordOf = new Map(evidence.records.map((record) => [record.proposal, record]));
  const withEvidence = evidence.records.filter((record) => record.evidence !== undefined);
  const storedEvidence =
    withEvidence.length === 0 && evidence.records.length > 0
      ? null
      : new Map(
          withEvidence.flatMap((record) =>
            (record.evidence ?? []).map((entry): [string, StoredEvidence] => [
              entry.evidenceDigest,
              { proposal: record.proposal, ...entry },
            ]),
          ),
        );
  return {
    tenant: evidence.manifest.tenant,
    audience: evidence.manifest.audience ?? null,
    events,
    replays,
    writes: sandbox.observations.receipts,
    requests: sandbox.observations.requests,
    effectObjects: state === undefined ? null : effectObjectsIn(state),
    stateObjectIds:
      state === undefined
        ? null
        : new Set(
            Object.entries(state).flatMap(([provider, collections]) =>
              Object.values(collections).flatMap((records) =>
                records.map(([id]) => `${provider}:${id}`),
              ),
            ),
          ),
    claimed: ledgerReceipts(events),
    startedByEffect,
    chain: evidence.chain,
    records: evidence.records,
    recordOf,
    storedEvidence,
    privateValues,
    effectOf: effectOfReplay,
  };
}

/** Objects carrying an effect, located by each provider's own convention (`effectOf`). */
function effectObjectsIn(state: NonNullable<ScenarioEvidence['sandbox']['state']>): EffectObject[] {
  const found: EffectObject[] = [];
  for (const [provider, collections] of Object.entries(state)) {
    const definition = Object.values(builtInProviders).find((p) => p.name === provider);
    if (definition?.effectOf === undefined) continue;
    for (const [collection, records] of Object.entries(collections)) {
      for (const [id, record] of records) {
        if (typeof record !== 'object' || record === null) continue;
        const effectKey = definition.effectOf(collection, record as JsonRecord);
        if (effectKey !== null) found.push({ provider, collection, id, effectKey });
      }
    }
  }
  return found;
}

/** Receipt ids the ledger claims, as `provider:id`. */
function ledgerReceipts(events: readonly LedgerEvent[]): Set<string> {
  const claimed = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      if (typeof record.id === 'string' && typeof record.provider === 'string') {
        claimed.add(`${record.provider}:${record.id}`);
      }
      for (const nested of Object.values(record)) visit(nested);
    }
  };
  for (const event of events) {
    if (RECEIPT_EVENTS.has(event.type)) visit(event.data);
  }
  return claimed;
}

/**
 * The evidence files of one scenario run — where each lives and what the manifest and the
 * store-records file hold. The runner writes them; the judge reads them; nothing else passes.
 */
import { join } from 'node:path';
import type { JsonValue } from '../core/canonical-json.js';
import type { Commitment } from '../core/commitment.js';

/** Where the evidence of one scenario is written, relative to the output directory. */
export function scenarioArtifactPaths(name: string) {
  return {
    ledger: join('ledgers', `${name}.jsonl`),
    manifest: join('ledgers', `${name}.manifest.json`),
    records: join('ledgers', `${name}.store.json`),
    sandbox: join('sandbox_state', `${name}.json`),
    markdown: join('reports', `${name}.md`),
    json: join('reports', `${name}.json`),
  } as const;
}

/** Ids and facts of a run, written next to the ledger. Holds no outcome of any call. */
export interface ScenarioManifest {
  readonly schema: 'sideguard.scenario-manifest/v1';
  readonly scenario: string;
  readonly tenant: string;
  readonly runId: string;
  readonly idempotency: 'honour' | 'ignore';
  /** Plan ref → proposal id. */
  readonly refs: Readonly<Record<string, string>>;
  readonly primaryRef: string;
  /** The audience the guard's authority evidence must name. */
  readonly audience?: string;
  /** The store's chain head when the ledger was exported: the file must end exactly there. */
  readonly ledgerHead: { readonly sequence: number; readonly hash: string } | null;
  /** Steps that threw instead of returning an outcome (a runner or guard defect). */
  readonly stepErrors: readonly {
    readonly step: number;
    readonly do: string;
    readonly message: string;
  }[];
}

/** One proposal as the store held it after the run (`ledgers/NAME.store.json`, one per plan ref). */
export interface StoreRecordEvidence {
  readonly ref: string;
  readonly proposal: string;
  readonly status: string | null;
  readonly revision?: number | null;
  /** Whether the encrypted private snapshot is still stored (`false` after erasure). */
  readonly snapshotPresent: boolean | null;
  /** The proposal commitment that authority evidence must bind. */
  readonly commitment?: Commitment | null;
  /** ISO-8601 end of the proposal's time to live. */
  readonly expiresAt?: string | null;
  /** The authority evidence the store holds for the proposal, exactly as presented. */
  readonly evidence?: readonly { readonly evidenceDigest: string; readonly evidence: JsonValue }[];
}

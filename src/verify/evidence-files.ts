/**
 * The evidence files of one scenario, read and checked: the exported ledger (JSONL, its chain
 * verified and anchored to the store's head at export), the sandbox's export, the store records
 * and the run manifest. Nothing the runner kept in memory is read.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerEvent } from '../core/ledger.js';
import type { RequestObservation } from '../sandbox/observations.js';
import type { SandboxReceipt } from '../sandbox/state-store.js';
import { verifyLedgerLines } from './ledger-lines.js';
import {
  type ScenarioManifest,
  type StoreRecordEvidence,
  scenarioArtifactPaths,
} from './scenario-artifacts.js';

export type { StoreRecordEvidence } from './scenario-artifacts.js';

import { VerifierInputError } from './verifier-errors.js';

/** A receipt the sandbox issued for a committed write (the fields the judge reads). */
export type SandboxReceiptEvidence = Pick<
  SandboxReceipt,
  | 'receiptId'
  | 'provider'
  | 'operation'
  | 'objectId'
  | 'effectKey'
  | 'amountMinor'
  | 'idempotencyKey'
  | 'committedAt'
>;

/** A data-plane request the sandbox logged (the fields the judge reads). */
export type SandboxRequestEvidence = Pick<
  RequestObservation,
  | 'sequence'
  | 'receivedAt'
  | 'provider'
  | 'operation'
  | 'method'
  | 'status'
  | 'delivery'
  | 'fault'
  | 'writeOutcome'
  | 'idempotencyKey'
  | 'effectKey'
  | 'receiptId'
>;

/** The parts of a sandbox export the judge reads. */
export interface SandboxEvidence {
  /** Provider → collection → `[id, record]` pairs: the provider's objects themselves. */
  readonly state?: Readonly<
    Record<string, Readonly<Record<string, readonly (readonly [string, unknown])[]>>>
  >;
  readonly observations: {
    readonly receipts: readonly SandboxReceiptEvidence[];
    readonly requests: readonly SandboxRequestEvidence[];
    readonly droppedEntryCount: number;
  };
}

/** Everything the judge reads, parsed. */
export interface ScenarioEvidence {
  readonly manifest: ScenarioManifest;
  readonly events: readonly LedgerEvent[];
  readonly chain: { readonly valid: boolean; readonly detail: string; readonly entries: number };
  readonly sandbox: SandboxEvidence;
  readonly records: readonly StoreRecordEvidence[];
}

async function readText(outputDir: string, relative: string, what: string): Promise<string> {
  try {
    return await readFile(join(outputDir, relative), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new VerifierInputError(
      `cannot read the ${what} ${join(outputDir, relative)} (${code ?? String(error)}); run the scenario first (sideguard run --case NAME)`,
    );
  }
}

function parseJson<T>(text: string, file: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new VerifierInputError(`${file} is not valid JSON`);
  }
}

/**
 * Verifies the exported ledger: one tenant's chain from genesis, ending exactly at the head the
 * store recorded at export (`anchor`), so entries cut from its end are detected too.
 */
async function readLedger(
  text: string,
  tenant: string,
  anchor: ScenarioManifest['ledgerHead'],
): Promise<{ events: LedgerEvent[]; chain: ScenarioEvidence['chain'] }> {
  const events: LedgerEvent[] = [];
  const verdict = await verifyLedgerLines(text.split('\n'), {
    expectedHeads: anchor === null ? [] : [{ tenant, ...anchor }],
    onEvent: (event) => events.push(event),
  });
  const chain = (valid: boolean, detail: string) => ({ valid, detail, entries: events.length });
  if (verdict.kind === 'invalid') {
    if (verdict.reason === 'head_mismatch') {
      return {
        events,
        chain: chain(
          false,
          `the file ends at sequence ${verdict.sequence ?? 0}, but the store's head at export was sequence ${anchor?.sequence ?? 0} (entries were removed from the end, or the file is from another run)`,
        ),
      };
    }
    return { events, chain: chain(false, `${verdict.reason}: ${verdict.message}`) };
  }
  const others = verdict.tenants.filter((head) => head.tenant !== tenant);
  if (others.length > 0) {
    return {
      events,
      chain: chain(false, `the file holds tenant ${others[0]?.tenant}, not the run's ${tenant}`),
    };
  }
  const head = verdict.tenants[0];
  return {
    events,
    chain: chain(
      true,
      `${verdict.entries} entries, head sequence ${head?.headSequence ?? 0} (${head?.headHash.slice(0, 16) ?? '-'}…)`,
    ),
  };
}

/** Reads a scenario's evidence files from the output directory. */
export async function readScenarioEvidence(
  outputDir: string,
  scenario: string,
): Promise<ScenarioEvidence> {
  const paths = scenarioArtifactPaths(scenario);
  const manifest = parseJson<ScenarioManifest>(
    await readText(outputDir, paths.manifest, 'run manifest'),
    paths.manifest,
  );
  if (manifest.schema !== 'sideguard.scenario-manifest/v1' || manifest.scenario !== scenario) {
    throw new VerifierInputError(
      `${join(outputDir, paths.manifest)} is not the manifest of scenario ${scenario}`,
    );
  }
  const { events, chain } = await readLedger(
    await readText(outputDir, paths.ledger, 'ledger export'),
    manifest.tenant,
    manifest.ledgerHead,
  );
  const sandbox = parseJson<SandboxEvidence>(
    await readText(outputDir, paths.sandbox, 'sandbox export'),
    paths.sandbox,
  );
  if (
    !Array.isArray(sandbox?.observations?.receipts) ||
    !Array.isArray(sandbox.observations.requests)
  ) {
    throw new VerifierInputError(`${join(outputDir, paths.sandbox)} is not a sandbox export`);
  }
  const records = parseJson<StoreRecordEvidence[]>(
    await readText(outputDir, paths.records, 'store records'),
    paths.records,
  );
  return { manifest, events, chain, sandbox, records };
}

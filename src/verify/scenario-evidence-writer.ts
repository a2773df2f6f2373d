/**
 * Writes what a scenario run leaves for the judge: the ledger export, the sandbox export, the
 * store's records of the run's proposals (status, snapshot presence, commitment, time to live and
 * the authority evidence as presented), and a manifest of ids. It writes facts, never verdicts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { GuardStore } from '../core/store.js';
import type { RunningSandbox } from '../sandbox/start-sandbox.js';
import {
  type ScenarioManifest,
  type StoreRecordEvidence,
  scenarioArtifactPaths,
} from './scenario-artifacts.js';

/** The audience the verifier's guard uses (the guard's default). */
export const VERIFIER_AUDIENCE = 'sideguard';

/** What one run produced, to be written. */
export interface ScenarioRunFacts {
  /** Where the files go, the store the run used, and the run's id. */
  readonly env: { readonly outputDir: string; readonly store: GuardStore; readonly runId: string };
  readonly scenario: string;
  readonly tenant: string;
  readonly idempotency: 'honour' | 'ignore';
  readonly primaryRef: string;
  /** Plan ref → proposal id. */
  readonly refs: ReadonlyMap<string, string>;
  /** The tenant's ledger as JSONL. */
  readonly ledger: string;
  readonly sandbox: RunningSandbox;
  readonly stepErrors: ScenarioManifest['stepErrors'];
}

/** Writes the evidence files of one run; returns its manifest. */
export async function writeScenarioEvidence(facts: ScenarioRunFacts): Promise<ScenarioManifest> {
  const { env, tenant } = facts;
  const paths = scenarioArtifactPaths(facts.scenario);
  const write = async (relative: string, content: string) => {
    const file = join(env.outputDir, relative);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  };
  await write(paths.ledger, facts.ledger);
  const ledgerHead = (await env.store.ledgerHead(tenant)) ?? null;
  await write(paths.sandbox, `${JSON.stringify(await facts.sandbox.control.export(), null, 2)}\n`);
  const records: StoreRecordEvidence[] = [];
  for (const [ref, proposal] of facts.refs) {
    const record = await env.store.getProposal(tenant, proposal);
    const evidence = record === undefined ? [] : await env.store.listEvidence(tenant, proposal);
    records.push({
      ref,
      proposal,
      status: record?.status ?? null,
      revision: record?.revision ?? null,
      snapshotPresent: record === undefined ? null : record.snapshot !== null,
      commitment: record?.commitment ?? null,
      expiresAt: record === undefined ? null : new Date(record.expiresAtMs).toISOString(),
      evidence: evidence.map((entry) => ({
        evidenceDigest: entry.evidenceDigest,
        evidence: entry.evidence,
      })),
    });
  }
  await write(paths.records, `${JSON.stringify(records, null, 2)}\n`);
  const manifest: ScenarioManifest = {
    schema: 'sideguard.scenario-manifest/v1',
    scenario: facts.scenario,
    tenant,
    runId: env.runId,
    idempotency: facts.idempotency,
    refs: Object.fromEntries(facts.refs),
    primaryRef: facts.primaryRef,
    audience: VERIFIER_AUDIENCE,
    ledgerHead,
    stepErrors: facts.stepErrors,
  };
  await write(paths.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

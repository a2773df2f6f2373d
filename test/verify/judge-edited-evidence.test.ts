/**
 * The judge checks approvals and time to live against evidence the store kept, anchored by the
 * hash-chained ledger: a record whose expiry moved before the commit, a commitment that is not
 * the one approved, evidence missing or edited — each regenerated report names the invariant.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultScenarioDirectory, reportScenario, runGate } from '../../src/verify/gate.js';
import type { InvariantId } from '../../src/verify/report-types.js';
import type { StoreRecordEvidence } from '../../src/verify/scenario-artifacts.js';
import { loadScenarioCatalogue } from '../../src/verify/scenario-fixtures.js';

let scratch: string;
let original: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sideguard-judge-edits-'));
  original = join(scratch, 'original');
  const run = await runGate({
    outputDir: original,
    only: ['safe_refund', 'two_of_three_approval'],
    writeSummary: false,
  });
  expect(run.summary.passed).toBe(true);
}, 60_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

type SandboxExport = {
  state: Record<string, Record<string, [string, Record<string, unknown>][]>>;
};

/** Copies the run, edits one scenario's store records (and sandbox export), judges it again. */
async function judgeEdited(
  name: string,
  scenario: string,
  edit: (records: StoreRecordEvidence[], commitStartedAt: string) => StoreRecordEvidence[],
  editSandbox: (exported: SandboxExport) => void = () => {},
) {
  const copy = join(scratch, name);
  await cp(original, copy, { recursive: true });
  const recordsFile = join(copy, 'ledgers', `${scenario}.store.json`);
  const ledger = (await readFile(join(copy, 'ledgers', `${scenario}.jsonl`), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; at: string });
  const commitStartedAt = ledger.find((event) => event.type === 'commit_started')?.at ?? '';
  const records = JSON.parse(await readFile(recordsFile, 'utf8')) as StoreRecordEvidence[];
  await writeFile(recordsFile, JSON.stringify(edit(records, commitStartedAt)));
  const sandboxFile = join(copy, 'sandbox_state', `${scenario}.json`);
  const exported = JSON.parse(await readFile(sandboxFile, 'utf8')) as SandboxExport;
  editSandbox(exported);
  await writeFile(sandboxFile, JSON.stringify(exported));
  const catalogue = await loadScenarioCatalogue(defaultScenarioDirectory);
  const found = catalogue.scenarios.find((entry) => entry.name === scenario);
  if (found === undefined) throw new Error(`no scenario ${scenario}`);
  const report = await reportScenario(copy, catalogue, found);
  const verdict = (id: InvariantId) => report.invariants.find((v) => v.id === id);
  return { report, verdict };
}

describe('the judge, from edited store evidence', () => {
  it('passes the files as written', async () => {
    const { report } = await judgeEdited('unchanged', 'two_of_three_approval', (r) => r);
    expect(report.passed).toBe(true);
  });

  it('names I2 when the store’s record moved the proposal’s time to live away from the ledger’s', async () => {
    const { verdict } = await judgeEdited('expired', 'safe_refund', (records, startedAt) =>
      records.map((record) => ({
        ...record,
        expiresAt: new Date(Date.parse(startedAt) - 1).toISOString(),
      })),
    );
    expect(verdict('I2')?.verdict).toBe('fail');
    expect(verdict('I2')?.evidence).toMatch(
      /the store's record of prop_\w+ holds another expiry than the ledger recorded/,
    );
  });

  it('names I9 when the store’s record holds another commitment than the ledger’s', async () => {
    const { verdict } = await judgeEdited('commitment', 'two_of_three_approval', (records) =>
      records.map((record) => ({
        ...record,
        commitment:
          record.commitment === null || record.commitment === undefined
            ? null
            : { ...record.commitment, value: `${record.commitment.value.slice(0, -4)}AAAA` },
      })),
    );
    expect(verdict('I9')?.verdict).toBe('fail');
    expect(verdict('I9')?.evidence).toMatch(
      /the store's record of prop_\w+ holds another commitment than the ledger recorded/,
    );
  });

  it('names I9 when evidence the ledger recorded is missing from the store, or edited', async () => {
    const missing = await judgeEdited('missing', 'two_of_three_approval', (records) =>
      records.map((record) => ({ ...record, evidence: [] })),
    );
    expect(missing.verdict('I9')?.verdict).toBe('fail');
    expect(missing.verdict('I9')?.evidence).toMatch(/is not in the store/);
    const edited = await judgeEdited('edited', 'two_of_three_approval', (records) =>
      records.map((record) => ({
        ...record,
        evidence: (record.evidence ?? []).map((entry) => ({
          ...entry,
          evidence: { ...(entry.evidence as object), expiresAt: '2999-01-01T00:00:00.000Z' },
        })),
      })),
    );
    expect(edited.verdict('I9')?.verdict).toBe('fail');
    expect(edited.verdict('I9')?.evidence).toMatch(
      /does not hash to the digest the ledger recorded/,
    );
  });

  it('names I1 when any provider’s state holds an object carrying an effect that no receipt names', async () => {
    const { verdict } = await judgeEdited(
      'crm-object',
      'safe_refund',
      (records) => records,
      (exported) => {
        const ticket = exported.state.crm?.tickets?.find(([id]) => id === '5001')?.[1];
        if (ticket === undefined) throw new Error('seed ticket 5001 missing');
        ticket.properties = { ...(ticket.properties as object), sideguard_effect: 'hidden-write' };
      },
    );
    expect(verdict('I1')?.verdict).toBe('fail');
    expect(verdict('I1')?.evidence).toMatch(
      /contradicts itself: crm object 5001 carries effect hidden-write in the provider's state but has no receipt/,
    );
  });
});

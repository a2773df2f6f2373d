/**
 * The safety gate: runs seeded scenarios through the guard against the sandbox, judges each
 * one only from the evidence files it left, writes Markdown/JSON/HTML reports and says whether
 * every invariant held. `sideguard gate`, `run` and `report` are thin wrappers around this.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import { type RunningSandbox, startSandbox } from '../sandbox/start-sandbox.js';
import { dropPostgresSchema } from '../stores/postgres/index.js';
import { judgeScenario, readScenarioEvidence } from './evidence-judge.js';
import { renderIndexHtml } from './report-html.js';
import { renderScenarioMarkdown } from './report-markdown.js';
import type { GateSummary, ScenarioReport } from './report-types.js';
import type { GuardUnderTest } from './run-guard.js';
import { scenarioArtifactPaths } from './scenario-artifacts.js';
import {
  loadScenarioCatalogue,
  type Scenario,
  type ScenarioCatalogue,
} from './scenario-fixtures.js';
import { runScenario } from './scenario-runner.js';
import { describeStore, openStore, parseStoreLocation } from './store-location.js';
import { VerifierInputError } from './verifier-errors.js';

/** The scenarios that ship with Sideguard. */
export const defaultScenarioDirectory = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'fixtures',
  'verifier',
);

/** The development key ring label the verifier uses (its keys protect nothing real). */
const VERIFIER_KEY_LABEL = 'sideguard-verifier';

/** Options shared by `gate` and `run`. */
export interface GateOptions {
  /** Where ledgers, reports and sandbox state go. @default '.demo' */
  readonly outputDir?: string;
  /** `postgres://…` or an SQLite file path. @default an SQLite file in the output directory */
  readonly store?: string;
  /** A directory with cases.json, scenarios.json and plans/. @default the shipped scenarios */
  readonly scenarioDirectory?: string;
  /** Only these scenarios (by name). @default all */
  readonly only?: readonly string[];
  /** Progress lines (one per scenario), e.g. to stderr. */
  readonly progress?: (line: string) => void;
  /**
   * Whether this run is the gate: it replaces `reports/gate.json` (cleared at start, so a gate
   * that dies leaves no stale verdict). `sideguard run` leaves the last gate's summary alone.
   * @default true
   */
  readonly writeSummary?: boolean;
  /**
   * Test-only, never set by the CLI: run the scenarios through a guard broken on purpose, to
   * prove the gate names the invariant the breakage violates. @internal
   */
  readonly underTest?: GuardUnderTest;
}

/** What a gate run produced. */
export interface GateRun {
  readonly summary: GateSummary;
  readonly reports: readonly ScenarioReport[];
  readonly outputDir: string;
}

async function ensureWritableDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true });
    await access(directory, constants.W_OK);
    const probe = join(directory, `.write-probe-${process.pid}`);
    await writeFile(probe, '');
    await rm(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new VerifierInputError(
      `output directory ${directory} is not writable (${code ?? String(error)}); choose another with --output-dir`,
    );
  }
}

function selectScenarios(
  catalogue: ScenarioCatalogue,
  only: readonly string[] | undefined,
): Scenario[] {
  if (only === undefined || only.length === 0) return [...catalogue.scenarios];
  const known = new Map(catalogue.scenarios.map((s) => [s.name, s]));
  return only.map((name) => {
    const scenario = known.get(name);
    if (scenario === undefined) {
      throw new VerifierInputError(
        `unknown scenario ${JSON.stringify(name)}; known scenarios: ${[...known.keys()].join(', ')}`,
      );
    }
    return scenario;
  });
}

/** Writes one scenario's Markdown and JSON reports. */
async function writeScenarioReports(outputDir: string, report: ScenarioReport): Promise<void> {
  const paths = scenarioArtifactPaths(report.scenario);
  await mkdir(join(outputDir, 'reports'), { recursive: true });
  await writeFile(join(outputDir, paths.json), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(outputDir, paths.markdown), renderScenarioMarkdown(report));
}

/** Rebuilds `reports/index.html` from every `reports/*.json` scenario report on disk. */
export async function writeIndexHtml(outputDir: string): Promise<string> {
  const directory = join(outputDir, 'reports');
  const names = (await readdir(directory))
    .filter((name) => name.endsWith('.json') && name !== 'gate.json')
    .sort();
  const reports: ScenarioReport[] = [];
  for (const name of names) {
    const parsed = JSON.parse(await readFile(join(directory, name), 'utf8')) as ScenarioReport;
    if (parsed.schema === 'sideguard.scenario-report/v1') reports.push(parsed);
  }
  let summary: GateSummary | undefined;
  try {
    summary = JSON.parse(await readFile(join(directory, 'gate.json'), 'utf8')) as GateSummary;
  } catch {
    summary = undefined;
  }
  // With a gate summary, show exactly its scenarios (not reports another run left behind).
  if (summary !== undefined) {
    const listed = new Set(summary.scenarios.map((entry) => entry.scenario));
    for (let index = reports.length - 1; index >= 0; index--) {
      if (!listed.has(reports[index]?.scenario ?? '')) reports.splice(index, 1);
    }
  }
  // Keep the gate's order (the issue's first five scenarios first); others follow by name.
  const order = new Map(summary?.scenarios.map((entry, index) => [entry.scenario, index]) ?? []);
  reports.sort(
    (a, b) =>
      (order.get(a.scenario) ?? Number.MAX_SAFE_INTEGER) -
        (order.get(b.scenario) ?? Number.MAX_SAFE_INTEGER) || (a.scenario < b.scenario ? -1 : 1),
  );
  const file = join(directory, 'index.html');
  await writeFile(file, renderIndexHtml(reports, summary));
  return file;
}

/** Judges a scenario from the files in the output directory and writes its reports. */
export async function reportScenario(
  outputDir: string,
  catalogue: ScenarioCatalogue,
  scenario: Scenario,
): Promise<ScenarioReport> {
  const supportCase = catalogue.cases.get(scenario.case);
  const plan = catalogue.plans.get(scenario.plan);
  if (supportCase === undefined || plan === undefined) {
    throw new VerifierInputError(`scenario ${scenario.name} has no case or plan`);
  }
  const evidence = await readScenarioEvidence(outputDir, scenario.name);
  const report = judgeScenario(scenario, supportCase, plan, evidence);
  await writeScenarioReports(outputDir, report);
  return report;
}

const failuresOf = (report: ScenarioReport): string[] => [
  ...report.invariants.filter((v) => v.verdict === 'fail').map((v) => v.id),
  ...report.expectations
    .filter((c) => !c.passed)
    .map((c) => `expectation:${c.name.replace(/\s+/g, '_')}`),
];

async function dropSchema(location: { url: string; schema: string }): Promise<void> {
  try {
    await dropPostgresSchema({ connectionString: location.url, schema: location.schema });
  } catch (error) {
    process.stderr.write(
      `sideguard: could not drop the gate's schema ${location.schema}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

/** Runs scenarios (all by default), judges them from their evidence and writes every report. */
export async function runGate(options: GateOptions = {}): Promise<GateRun> {
  const started = performance.now();
  const outputDir = resolve(options.outputDir ?? '.demo');
  const catalogue = await loadScenarioCatalogue(
    options.scenarioDirectory ?? defaultScenarioDirectory,
  );
  const scenarios = selectScenarios(catalogue, options.only);
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  // Reject a bad --store before anything is created on disk.
  const location = parseStoreLocation(options.store, outputDir, runId);
  await ensureWritableDirectory(outputDir);
  await ensureWritableDirectory(join(outputDir, 'reports'));
  const writeSummary = options.writeSummary ?? true;
  // Nothing is ever deleted from a store: every run writes under its own tenants
  // (`<scenario>.<runId>`), so earlier runs — or anything else in that database — stay intact.
  let store: GuardStore | undefined;
  const sandboxes: RunningSandbox[] = [];
  const reports: ScenarioReport[] = [];
  try {
    try {
      store = await openStore(location);
    } catch (error) {
      throw new VerifierInputError(
        `cannot open the store ${describeStore(location)}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const stateRoot = join(outputDir, 'sandbox_state');
    const start = async (options: Parameters<typeof startSandbox>[0]): Promise<RunningSandbox> => {
      try {
        return await startSandbox(options);
      } catch (error) {
        throw new VerifierInputError(
          `cannot start the sandbox in ${options.stateDir}: ${error instanceof Error ? error.message : String(error)} (is another gate using --output-dir ${outputDir}? use another directory)`,
        );
      }
    };
    const honour = await start({
      stateDir: join(stateRoot, '.honour'),
      seed: 1,
      idempotency: { payments: 'honour' },
      durability: 'os',
    });
    sandboxes.push(honour);
    const ignore = await start({
      stateDir: join(stateRoot, '.ignore'),
      seed: 1,
      idempotency: { payments: 'ignore' },
      durability: 'os',
    });
    sandboxes.push(ignore);
    // The sandboxes' state locks make this gate the directory's only user: only now clear the
    // previous verdict, so a gate that dies from here on leaves no stale one behind.
    if (writeSummary) {
      for (const name of ['gate.json', 'index.html']) {
        await rm(join(outputDir, 'reports', name), { force: true });
      }
    }
    const env = {
      outputDir,
      store,
      storeLocation: location,
      keyRing: createDevelopmentKeyRing(VERIFIER_KEY_LABEL),
      keyRingLabel: VERIFIER_KEY_LABEL,
      sandboxes: { honour, ignore },
      runId,
      underTest: options.underTest,
    };
    for (const [index, scenario] of scenarios.entries()) {
      options.progress?.(`[${index + 1}/${scenarios.length}] ${scenario.name}`);
      await runScenario(env, catalogue, scenario);
      reports.push(await reportScenario(outputDir, catalogue, scenario));
    }
  } finally {
    for (const sandbox of sandboxes) await sandbox.close();
    await store?.close();
    // A PostgreSQL run gets a fresh schema; the verdicts live in the files, so drop it.
    if (location.kind === 'postgres' && store !== undefined) await dropSchema(location);
  }
  const summary: GateSummary = {
    schema: 'sideguard.gate/v1',
    passed: reports.every((r) => r.passed),
    scenarios: reports.map((r) => ({
      scenario: r.scenario,
      label: r.label,
      writes: r.external_write_count,
      passed: r.passed,
      failures: failuresOf(r),
    })),
    durationMs: Math.round(performance.now() - started),
    store: describeStore(location),
  };
  if (writeSummary) {
    await writeFile(
      join(outputDir, 'reports', 'gate.json'),
      `${JSON.stringify(summary, null, 2)}\n`,
    );
  }
  await writeIndexHtml(outputDir);
  return { summary, reports, outputDir };
}

/** The gate's text output: a verdict line, then one line per scenario. */
export function formatGateSummary(summary: GateSummary): string {
  const failed = summary.scenarios.filter((s) => !s.passed);
  const head =
    failed.length === 0
      ? `PASS gate scenarios=${summary.scenarios.length}`
      : `FAIL gate scenarios=${summary.scenarios.length} failed=${failed.length} violated=${[...new Set(failed.flatMap((s) => s.failures))].join(',')}`;
  const lines = summary.scenarios.map(
    (s) =>
      `- ${s.scenario}: ${s.label} writes=${s.writes} passed=${s.passed}${s.passed ? '' : ` failed=${s.failures.join(',')}`}`,
  );
  return `${[head, ...lines].join('\n')}\n`;
}

/**
 * The retail world's report: a summary (tasks matching, writes, duplicate effects the sandbox
 * saw, duplicates the gateway prevented, faults) and every task's line, as JSON for machines and
 * Markdown for review — which faults hit which task, and what became of the write.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RetailTaskResult } from './retail-world-runner.js';

/** The run's totals. */
export interface RetailWorldSummary {
  readonly tasks: number;
  /** Tasks judged against expected changes (the test split). */
  readonly judged: number;
  readonly matching: number;
  /** Gold write actions replayed. */
  readonly writeActions: number;
  /** Write calls the agent made (retries and second sends included). */
  readonly writeCalls: number;
  /** Writes the sandbox committed. */
  readonly committedWrites: number;
  /** Effects the sandbox saw committed more than once (must be 0). */
  readonly duplicateEffects: number;
  readonly duplicatesPrevented: number;
  /** Faults applied, by kind. */
  readonly faults: Readonly<Record<string, number>>;
  readonly tasksHitByFaults: number;
  /** Calls that did not settle, reads the gateway did not forward. */
  readonly problems: number;
  readonly durationMs: number;
}

/** The whole report document. */
export interface RetailWorldReport {
  readonly format: 'sideguard-world-report';
  readonly version: 1;
  readonly world: 'retail';
  readonly source: string;
  readonly split: string;
  readonly faultSeed: number | null;
  readonly twice: boolean;
  /** The baseline without Sideguard (the agent calls the retail API itself). */
  readonly direct: boolean;
  readonly passed: boolean;
  readonly summary: RetailWorldSummary;
  readonly tasks: readonly RetailTaskResult[];
}

/** Totals of `results`. */
export function summarize(
  results: readonly RetailTaskResult[],
  durationMs: number,
): RetailWorldSummary {
  const faults: Record<string, number> = {};
  for (const hit of results.flatMap((result) => result.faults)) {
    faults[hit.fault] = (faults[hit.fault] ?? 0) + 1;
  }
  const sum = (pick: (result: RetailTaskResult) => number) =>
    results.reduce((total, result) => total + pick(result), 0);
  return {
    tasks: results.length,
    judged: results.filter((result) => result.matches !== null).length,
    matching: results.filter((result) => result.matches === true).length,
    writeActions: sum((result) => result.writes.length),
    writeCalls: sum((result) =>
      result.writes.reduce(
        (calls, write) => calls + write.calls + (write.secondSend?.calls ?? 0),
        0,
      ),
    ),
    committedWrites: sum((result) => result.committedWrites),
    duplicateEffects: sum((result) => result.duplicateEffects),
    duplicatesPrevented: sum((result) => result.duplicatesPrevented),
    faults,
    tasksHitByFaults: results.filter((result) => result.faults.length > 0).length,
    problems: sum((result) => result.problems.length),
    durationMs,
  };
}

/** Whether the run passed: every judged task matches, no duplicate effect, nothing unsettled. */
export function passed(summary: RetailWorldSummary): boolean {
  return (
    summary.matching === summary.judged && summary.duplicateEffects === 0 && summary.problems === 0
  );
}

/** One line per task, for the terminal. */
export function taskLine(result: RetailTaskResult): string {
  const verdict = result.matches === null ? 'ran  ' : result.matches ? 'match' : 'DIFF ';
  const faults =
    result.faults.length === 0
      ? ''
      : `  faults ${result.faults.map((hit) => `${hit.fault}@${hit.operation}`).join(', ')}`;
  const duplicates =
    result.duplicateEffects > 0 ? `  DUPLICATE EFFECTS ${result.duplicateEffects}` : '';
  const detail = result.differences[0] === undefined ? '' : `  ${result.differences[0]}`;
  return `task ${String(result.index).padStart(3)}  ${verdict}  writes ${result.writes.length} (committed ${result.committedWrites}, prevented ${result.duplicatesPrevented})  ${(result.durationMs / 1000).toFixed(1)} s${faults}${duplicates}${detail}`;
}

/** The summary as a few lines. */
export function summaryText(report: RetailWorldReport): string {
  const s = report.summary;
  const faults = Object.entries(s.faults)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  return [
    `retail world (${report.split}${report.faultSeed === null ? '' : `, faults seed ${report.faultSeed}`}${report.twice ? ', every write twice' : ''}${report.direct ? ', WITHOUT Sideguard' : ''}): ${report.passed ? 'PASS' : 'FAIL'}`,
    `tasks matching ${s.matching}/${s.judged}${s.tasks > s.judged ? ` (${s.tasks - s.judged} not judged: no expected changes for this split)` : ''}`,
    `writes: ${s.writeActions} gold, ${s.writeCalls} calls, ${s.committedWrites} committed by the sandbox; duplicate effects ${s.duplicateEffects}; duplicates prevented ${s.duplicatesPrevented}`,
    `faults: ${faults === '' ? 'none' : `${faults} (${s.tasksHitByFaults} tasks hit)`}; problems ${s.problems}; ${(s.durationMs / 1000).toFixed(1)} s`,
  ].join('\n');
}

function markdown(report: RetailWorldReport): string {
  const lines = [
    '# Retail world report',
    '',
    `Source: ${report.source}`,
    '',
    '```',
    summaryText(report),
    '```',
    '',
    '| task | matches | writes | committed | prevented | duplicate effects | faults (operation: fault → write) |',
    '|---:|---|---:|---:|---:|---:|---|',
  ];
  for (const task of report.tasks) {
    const faults = task.faults
      .map((hit) => `${hit.operation}: ${hit.fault} → ${hit.writeOutcome}`)
      .join('; ');
    lines.push(
      `| ${task.index} | ${task.matches === null ? '—' : task.matches ? 'yes' : '**no**'} | ${task.writes.length} | ${task.committedWrites} | ${task.duplicatesPrevented} | ${task.duplicateEffects} | ${faults} |`,
    );
  }
  const mismatched = report.tasks.filter(
    (task) => task.matches === false || task.problems.length > 0,
  );
  if (mismatched.length > 0) {
    lines.push('', '## Differences and problems', '');
    for (const task of mismatched) {
      for (const line of [...task.differences, ...task.problems])
        lines.push(`- task ${task.index}: ${line.replace(/\|/g, '\\|')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Writes `retail-report.json` and `retail-report.md` into `dir`; returns their paths. */
export async function writeRetailReport(
  dir: string,
  report: RetailWorldReport,
): Promise<{ json: string; markdown: string }> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'retail-report.json');
  const md = join(dir, 'retail-report.md');
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(md, markdown(report));
  return { json, markdown: md };
}

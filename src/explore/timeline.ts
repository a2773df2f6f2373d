/**
 * The readable merged timeline of one schedule: the scheduler's decisions (faults, crashes, which
 * operation ran), the ledger (each event at the step it became durable) and the provider's own
 * writes, in step order, as Markdown.
 */
import { stepsOfSequences } from './invariants/evidence-index.js';
import type { ScheduleEvidence, Violation } from './schedule-evidence.js';
import type { TraceEntry } from './simulation.js';
import { SIMULATION_EPOCH_MS } from './virtual-clock.js';

interface Line {
  readonly step: number;
  readonly order: number;
  readonly atMs: number;
  readonly source: 'decision' | 'ledger' | 'provider';
  readonly text: string;
}

const clockText = (ms: number): string => `+${((ms - SIMULATION_EPOCH_MS) / 1000).toFixed(3)}s`;

/** Renders the timeline (Markdown). */
export function renderTimeline(
  evidence: ScheduleEvidence,
  trace: readonly TraceEntry[],
  violation: Violation | undefined,
  title: string,
): string {
  const lines: Line[] = [];
  let order = 0;
  for (const entry of trace) {
    lines.push({
      step: entry.step,
      order: order++,
      atMs: entry.atMs,
      source: 'decision',
      text: entry.what,
    });
  }
  const stepOfSequence = stepsOfSequences(evidence);
  for (const event of evidence.events) {
    const reason = typeof event.data.reasonCode === 'string' ? ` ${event.data.reasonCode}` : '';
    const receipt = (event.data.receipt as { id?: string } | undefined)?.id;
    lines.push({
      step: stepOfSequence.get(event.sequence) ?? Number.MAX_SAFE_INTEGER,
      order: order++,
      atMs: Date.parse(event.at),
      source: 'ledger',
      text: `#${event.sequence} ${event.proposal ?? '-'} ${event.type}${event.status === null ? '' : ` → ${event.status}`}${reason}${receipt === undefined ? '' : ` ${receipt}`}`,
    });
  }
  for (const write of evidence.writes) {
    lines.push({
      step: write.step,
      order: order++,
      atMs: write.atMs,
      source: 'provider',
      text: `WRITE ${write.operation} ${write.objectId} for ${write.proposal ?? 'another actor'} key=${write.idempotencyKey ?? '-'}`,
    });
  }
  lines.sort((a, b) => a.step - b.step || a.order - b.order);
  const rows = lines.map(
    (line) =>
      `| ${line.step === Number.MAX_SAFE_INTEGER ? '–' : line.step} | ${clockText(line.atMs)} | ${line.source} | ${line.text.replaceAll('|', '\\|')} |`,
  );
  return [
    `# ${title}`,
    '',
    violation === undefined
      ? 'No violation.'
      : `**${violation.invariant}** on \`${violation.effect}\`: ${violation.message}`,
    '',
    `Provider honours idempotency keys: ${evidence.honoursKeys}. Steps: ${evidence.steps}. Clock: virtual, from 2026-01-01T00:00:00Z.`,
    '',
    '| step | clock | source | what |',
    '|---:|---:|---|---|',
    ...rows,
    '',
  ].join('\n');
}

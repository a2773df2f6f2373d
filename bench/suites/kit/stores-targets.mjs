/**
 * Issue 14's targets for the `stores` suite, each as measured, baseline, ratio and met/missed
 * (every ratio between two numbers of the same run), and the suite's printed table.
 */
import { ratioTarget, rssTargets } from './stats.mjs';

/** Peak RSS ceiling of every bench process (issue 14). */
export const RSS_CEILING_MB = 150;

export const LABELS = {
  memory: 'memory',
  sqliteFull: 'SQLite FULL',
  sqliteNormal: 'SQLite NORMAL',
  postgres: 'PostgreSQL',
  postgresBare: 'PostgreSQL bare INSERT transaction',
  powertoolsRedis: 'Powertools + Redis (peer, no persistence)',
  powertoolsRedisDurable: 'Powertools + Redis AOF always (durable peer)',
};

const CONCURRENCY_LABELS = {
  c1: 'c1',
  c64: 'c64',
  c64t8: 'c64, 8 tenants',
};

/** The duplicate-storm target over every Sideguard store (the peers' storms are shown only). */
function stormTarget(storms) {
  const ours = Object.entries(storms).filter(([name]) => !name.startsWith('powertools'));
  const maxEffects = Math.max(...ours.map(([, value]) => value.effectsPerStormMax));
  const indefinite = ours.reduce((sum, [, value]) => sum + value.indefinite, 0);
  const met = ours.every(
    ([, value]) =>
      value.effectsPerStormMin === 1 && value.effectsPerStormMax === 1 && value.indefinite === 0,
  );
  // Shown, not judged (the issue does not ask it): how many proposals the answers named.
  const proposals = Math.max(...ours.map(([, value]) => value.proposalsPerStormMax ?? 0));
  return {
    target: 'duplicate storm ×64: exactly 1 effect per storm, every caller a definite outcome',
    measured: `${maxEffects} effect(s) max, ${indefinite} caller(s) without a definite outcome (answers named ≤ ${proposals} proposal(s) per storm)`,
    baseline: 1,
    baselineName: '1 effect, 0 indefinite',
    ratio: null,
    requiredRatio: '= 1',
    met: ours.length === 0 ? null : met,
  };
}

export function evaluateTargets({ fdatasync, actions, storms, peakRssByProcess }) {
  const sync = fdatasync.perSecond;
  const rate = (name, key) => actions[name]?.[key]?.perSecond ?? null;
  const peer = (key) => rate('powertoolsRedis', key);
  const durable = (key) => rate('powertoolsRedisDurable', key);
  const bare = (key) => rate('postgresBare', key);
  return [
    ratioTarget('memory store c1 ≥ 1.0× peer c1', rate('memory', 'c1'), peer('c1'), 'peer c1', 1),
    ratioTarget(
      'memory store c64 ≥ 0.5× peer c64',
      rate('memory', 'c64'),
      peer('c64'),
      'peer c64',
      0.5,
    ),
    ratioTarget(
      'SQLite FULL c1 ≥ 0.5× fdatasync/s',
      rate('sqliteFull', 'c1'),
      sync,
      'fdatasync/s',
      0.5,
    ),
    ratioTarget(
      'SQLite FULL c1 ≥ 1.0× durable peer c1',
      rate('sqliteFull', 'c1'),
      durable('c1'),
      'durable peer c1',
      1,
    ),
    ratioTarget(
      'SQLite FULL c64 ≥ 1.5× fdatasync/s',
      rate('sqliteFull', 'c64'),
      sync,
      'fdatasync/s',
      1.5,
    ),
    ratioTarget(
      'SQLite FULL c64 ≥ 0.5× durable peer c64',
      rate('sqliteFull', 'c64'),
      durable('c64'),
      'durable peer c64',
      0.5,
    ),
    ratioTarget(
      'SQLite NORMAL c1 ≥ 0.5× peer c1',
      rate('sqliteNormal', 'c1'),
      peer('c1'),
      'peer c1',
      0.5,
    ),
    ratioTarget(
      'SQLite NORMAL c64 ≥ 0.25× peer c64',
      rate('sqliteNormal', 'c64'),
      peer('c64'),
      'peer c64',
      0.25,
    ),
    ratioTarget(
      'PostgreSQL c1 ≥ 0.25× bare insert transaction c1',
      rate('postgres', 'c1'),
      bare('c1'),
      'bare insert c1',
      0.25,
    ),
    ratioTarget(
      'PostgreSQL c64 (4 × 16), one tenant ≥ 0.5× bare inserts c64',
      rate('postgres', 'c64'),
      bare('c64'),
      'bare inserts c64 (4 × 16)',
      0.5,
    ),
    ratioTarget(
      'PostgreSQL c64 (4 × 16), eight tenants ≥ 0.5× bare inserts c64',
      rate('postgres', 'c64t8'),
      bare('c64'),
      'bare inserts c64 (4 × 16)',
      0.5,
    ),
    stormTarget(storms),
    ...rssTargets(peakRssByProcess, RSS_CEILING_MB),
  ];
}

export function tableOf(results) {
  const rows = [
    {
      measurement: 'fdatasync (append 64 B + fdatasync)',
      'per second': results.fdatasync.perSecond,
      'p50 ms': results.fdatasync.p50Ms,
      'p99 ms': results.fdatasync.p99Ms,
      'CPU µs/call': '',
      runs: results.fdatasync.runs.join(' / '),
      spread: `${results.fdatasync.spreadPercent}%`,
    },
  ];
  for (const [name, byKey] of Object.entries(results.actions)) {
    for (const [key, value] of Object.entries(byKey)) {
      rows.push({
        measurement: `${LABELS[name] ?? name} ${CONCURRENCY_LABELS[key] ?? key}${value.processes ? ` (${value.processes} processes)` : ''}`,
        'per second': value.perSecond,
        'p50 ms': value.p50Ms,
        'p99 ms': value.p99Ms,
        'CPU µs/call': value.cpuUsPerCall ?? '',
        runs: value.runs.join(' / '),
        spread: `${value.spreadPercent}%${value.failed ? ` (${value.failed} failed)` : ''}`,
      });
    }
  }
  for (const [name, value] of Object.entries(results.storms)) {
    rows.push({
      measurement: `storm ×64 ${LABELS[name] ?? name}: effects/storm ${value.effectsPerStormMin}–${value.effectsPerStormMax}${value.proposalsPerStormMax > 1 ? `, answers named ≤ ${value.proposalsPerStormMax} proposals` : ''}`,
      'per second': '',
      'p50 ms': '',
      'p99 ms': value.p99Ms,
      'CPU µs/call': '',
      runs: `${value.storms} storms`,
      spread: Object.entries(value.outcomes)
        .map(([key, count]) => `${key} ${count}`)
        .join(', '),
    });
  }
  return rows;
}

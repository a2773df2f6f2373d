/**
 * The gate's wall time on the default store (SQLite in a fresh output directory), several runs,
 * median: the issue asks that the whole gate finishes in seconds. Runs the built CLI as a user
 * would, so process start-up and the sandboxes' start-up are included.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'dist', 'cli', 'main.js');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function run({ log, quick }) {
  const runs = quick ? 1 : 3;
  const wallMs = [];
  const gateMs = [];
  let scenarios = 0;
  for (let index = 0; index < runs; index++) {
    const outputDir = mkdtempSync(join(tmpdir(), 'sideguard-bench-gate-'));
    try {
      const started = performance.now();
      const result = spawnSync(
        process.execPath,
        [cli, 'gate', '--json', '--output-dir', outputDir],
        {
          encoding: 'utf8',
          timeout: 300_000,
        },
      );
      const elapsed = performance.now() - started;
      if (result.status !== 0) {
        throw new Error(
          `gate run ${index + 1} exited ${result.status}: ${result.stdout.slice(0, 500)} ${result.stderr.slice(0, 500)}`,
        );
      }
      const summary = JSON.parse(result.stdout);
      scenarios = summary.scenarios.length;
      wallMs.push(Math.round(elapsed));
      gateMs.push(summary.durationMs);
      log(
        `run ${index + 1}: ${scenarios} scenarios, ${(elapsed / 1000).toFixed(2)} s wall (${(summary.durationMs / 1000).toFixed(2)} s inside the gate)`,
      );
    } finally {
      rmSync(outputDir, { recursive: true, force: true });
    }
  }
  const results = {
    scenarios,
    runs,
    wallMsMedian: median(wallMs),
    gateMsMedian: median(gateMs),
    wallMs,
    target: 'finishes in seconds on the default store',
  };
  return {
    name: 'gate',
    results,
    table: [
      {
        measure: 'gate wall time (CLI, SQLite default)',
        median: `${(results.wallMsMedian / 1000).toFixed(2)} s`,
        runs: wallMs.map((ms) => (ms / 1000).toFixed(2)).join(' / '),
      },
      {
        measure: 'inside the gate (scenarios + reports)',
        median: `${(results.gateMsMedian / 1000).toFixed(2)} s`,
        runs: gateMs.map((ms) => (ms / 1000).toFixed(2)).join(' / '),
      },
    ],
  };
}

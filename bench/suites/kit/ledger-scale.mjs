/**
 * Whether the ledger's verification and export are linear and stream in constant memory: on the
 * measured tenant's real chain in the growth store, `guard.exportLedgerChunks` and `guard.verifyLedger`
 * (each in its own process), then `sideguard ledger verify` (the CLI, under `/usr/bin/time` for
 * its peak RSS) on the export and on its first quarter and half (prefixes of a valid chain are
 * valid chains). The CLI's start-up (loading Node and the package, ~1 s here) is measured on a
 * one-event prefix and subtracted for µs/event.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TENANT } from './guard-load.mjs';
import { round } from './stats.mjs';

const worker = fileURLToPath(new URL('./ledger-worker.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

function runWorker(mode, path, out) {
  const text = execFileSync(process.execPath, [worker, mode, path, TENANT, out ?? ''], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  const report = JSON.parse(text.trim().split('\n').at(-1));
  return { ...report, ms: round(report.ms), maxRssMb: round(report.maxRssMb, 1) };
}

/** The first `lines` lines of `file`, as `target`. */
function prefix(file, lines, target) {
  const fd = openSync(target, 'w');
  try {
    const result = spawnSync('head', ['-n', String(lines), file], {
      stdio: ['ignore', fd, 'inherit'],
    });
    if (result.status !== 0) throw new Error(`head -n ${lines} ${file} failed`);
  } finally {
    closeSync(fd);
  }
}

/** `sideguard ledger verify FILE --json` under GNU time: verdict, wall ms, peak RSS. */
function cliVerify(file) {
  const result = spawnSync(
    '/usr/bin/time',
    ['-f', 'TIME %M %e', process.execPath, cli, 'ledger', 'verify', file, '--json'],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  const timing = result.stderr.match(/TIME (\d+) ([\d.]+)/);
  if (timing === null) throw new Error(`ledger verify: no timing (${result.stderr.slice(-500)})`);
  const verdict = JSON.parse(result.stdout.trim());
  return {
    verdict: verdict.kind,
    events: verdict.entries ?? null,
    ms: round(Number(timing[2]) * 1000),
    maxRssMb: round(Number(timing[1]) / 1024, 1),
  };
}

/** Runs every ledger measurement; `dir` receives the JSONL files (removed afterwards). */
export function measureLedgerScale(path, dir, log) {
  if (!existsSync('/usr/bin/time')) return { skipped: '/usr/bin/time is not installed' };
  mkdirSync(dir, { recursive: true });
  const full = join(dir, 'ledger.jsonl');
  try {
    const exported = runWorker('export', path, full);
    log(
      `ledger: guard.exportLedgerChunks ${exported.events} events in ${exported.ms} ms, peak RSS ${exported.maxRssMb} MB`,
    );
    const verified = runWorker('verify', path);
    log(
      `ledger: guard.verifyLedger ${verified.verdict} in ${verified.ms} ms, peak RSS ${verified.maxRssMb} MB`,
    );
    const startupFile = join(dir, 'ledger-1.jsonl');
    prefix(full, 1, startupFile);
    const startup = cliVerify(startupFile);
    log(
      `ledger: sideguard ledger verify of 1 event (start-up): ${startup.ms} ms, peak RSS ${startup.maxRssMb} MB`,
    );
    const cliRuns = [];
    for (const fraction of [0.25, 0.5, 1]) {
      const lines = Math.round(exported.events * fraction);
      const file = fraction === 1 ? full : join(dir, `ledger-${lines}.jsonl`);
      if (fraction < 1) prefix(full, lines, file);
      const verdict = cliVerify(file);
      const usPerEvent = round(((verdict.ms - startup.ms) * 1000) / lines, 2);
      cliRuns.push({ lines, ...verdict, usPerEvent });
      log(
        `ledger: sideguard ledger verify ${lines} events: ${verdict.verdict} in ${verdict.ms} ms (${usPerEvent} µs/event after start-up), peak RSS ${verdict.maxRssMb} MB`,
      );
    }
    return {
      exportBytes: exported.bytes,
      exported,
      verified,
      cliStartup: startup,
      cliVerify: cliRuns,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

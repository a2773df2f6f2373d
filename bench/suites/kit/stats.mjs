/**
 * The bench's arithmetic: medians, percentiles, the summary of several runs, the bounded loop
 * that drives a contender, and a target row (measured ÷ baseline against a required ratio).
 */
import { randomBytes } from 'node:crypto';

export function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function percentile(sorted, fraction) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

export const round = (value, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? null
    : Number(value.toFixed(digits));

export function latencyStats(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
}

/** Median of several runs, with their spread: (max - min) / median. */
export function summarise(samples) {
  const rates = samples.map((sample) => sample.perSecond);
  const middle = median(rates);
  const cpu = samples.map((sample) => sample.cpuUsPerCall).filter((value) => value != null);
  return {
    perSecond: round(middle),
    p50Ms: round(median(samples.map((sample) => sample.p50Ms)), 2),
    p99Ms: round(median(samples.map((sample) => sample.p99Ms)), 2),
    ...(cpu.length > 0 ? { cpuUsPerCall: round(median(cpu)) } : {}),
    runs: rates.map((rate) => round(rate)),
    spreadPercent: middle
      ? round(((Math.max(...rates) - Math.min(...rates)) / middle) * 100, 1)
      : null,
    failed: samples.reduce((sum, sample) => sum + (sample.failed ?? 0), 0),
  };
}

/**
 * Runs `call(sequence)` on `concurrency` loops until `durationMs` passed or `maxCalls` were
 * issued; `call` resolves true for a definite success. Reports this process's CPU per call.
 */
export async function drive({ concurrency, durationMs, maxCalls, call }) {
  const latencies = [];
  let issued = 0;
  let completed = 0;
  let failed = 0;
  const errors = new Map();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline && issued < maxCalls) {
      const sequence = issued;
      issued += 1;
      const begin = performance.now();
      try {
        if (await call(sequence)) completed += 1;
        else failed += 1;
      } catch (error) {
        failed += 1;
        const name = error?.code ?? error?.name ?? 'Error';
        errors.set(name, (errors.get(name) ?? 0) + 1);
      }
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    perSecond: (completed / elapsedMs) * 1000,
    completed,
    failed,
    errors: Object.fromEntries(errors),
    elapsedMs,
    cpuUsPerCall: completed > 0 ? (cpu.user + cpu.system) / completed : null,
    ...latencyStats(latencies),
  };
}

/** `drive` with a fresh id per call: `${label}-${nonce}-${sequence}`, unique across runs. */
export function driveIds({ concurrency, durationMs, maxCalls, label }, call) {
  const nonce = randomBytes(4).toString('hex');
  return drive({
    concurrency,
    durationMs,
    maxCalls,
    call: (sequence) => call(`${label}-${nonce}-${sequence}`, sequence),
  });
}

/** A target row: ratio = measured / baseline; met when the ratio reaches `requiredRatio`. */
export function ratioTarget(name, measured, baseline, baselineName, requiredRatio) {
  const known = measured !== null && measured !== undefined && Boolean(baseline);
  return {
    target: name,
    measured: measured ?? null,
    baseline: baseline ?? null,
    baselineName,
    ratio: known ? round(measured / baseline, 2) : null,
    requiredRatio: `≥ ${requiredRatio}`,
    met: known ? measured / baseline >= requiredRatio : null,
  };
}

/** One row per process: its peak RSS against a ceiling in MB. */
export function rssTargets(processes, ceilingMb) {
  return Object.entries(processes).map(([name, mb]) => ({
    target: `peak RSS < ${ceilingMb} MB: ${name}`,
    measured: mb,
    baseline: ceilingMb,
    baselineName: 'ceiling (MB)',
    ratio: mb === null ? null : round(mb / ceilingMb, 2),
    requiredRatio: '< 1',
    met: mb === null ? null : mb < ceilingMb,
  }));
}

/**
 * Parent side of the contender processes: `startContender(spec, processes)` forks that many
 * `contender-worker.mjs` children; a measurement runs on all of them at once and its rate is
 * their sum.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';

const worker = fileURLToPath(new URL('./contender-worker.mjs', import.meta.url));
const TIMEOUT_MS = 600_000;

/** Waits for the child's next message of `kind` (a `failed` message or an exit rejects). */
function next(child, spec, kind) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${spec.kind} worker: no ${kind} within ${TIMEOUT_MS / 1000} s`));
    }, TIMEOUT_MS);
    const listener = (message) => {
      if (message.kind === 'failed') {
        cleanup();
        reject(new Error(`${spec.kind} worker failed: ${message.error}`));
      } else if (message.kind === kind) {
        cleanup();
        resolve(message);
      }
    };
    const onExit = (code) => {
      cleanup();
      reject(new Error(`${spec.kind} worker exited with ${code} before ${kind}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', listener);
      child.off('exit', onExit);
    };
    child.on('message', listener);
    child.once('exit', onExit);
  });
}

/** Several processes' results as one: summed rates, the median p50 and the worst p99. */
function combine(results) {
  const errors = {};
  for (const result of results) {
    for (const [name, count] of Object.entries(result.errors))
      errors[name] = (errors[name] ?? 0) + count;
  }
  const sum = (key) => results.reduce((total, result) => total + result[key], 0);
  const cpu = results.map((result) => result.cpuUsPerCall).filter((value) => value !== null);
  return {
    perSecond: sum('perSecond'),
    completed: sum('completed'),
    failed: sum('failed'),
    errors,
    p50Ms: median(results.map((result) => result.p50Ms)),
    p99Ms: Math.max(...results.map((result) => result.p99Ms)),
    cpuUsPerCall: cpu.length > 0 ? median(cpu) : null,
  };
}

/** Forks `processes` children running the contender `spec`. */
export function startContender(spec, processes = 1) {
  const children = Array.from({ length: processes }, () =>
    fork(worker, [JSON.stringify(spec)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--expose-gc'],
    }),
  );
  return {
    processes,
    /** Resolves with each child's time to open its store (ms) once all are ready. */
    ready: Promise.all(children.map((child) => next(child, spec, 'ready'))).then((replies) =>
      replies.map((reply) => reply.openMs),
    ),
    /** `concurrency` callers per process; `tenants` spreads the actions over that many. */
    async measure(options) {
      const replies = children.map((child) => next(child, spec, 'measured'));
      for (const child of children) child.send({ kind: 'measure', ...options });
      return combine((await Promise.all(replies)).map((reply) => reply.result));
    },
    async storms(count, label) {
      const [first] = children;
      const reply = next(first, spec, 'stormed');
      first.send({ kind: 'storms', count, label });
      return (await reply).storms;
    },
    /** Ends the children; resolves with each one's peak RSS in MB. */
    async stop() {
      const replies = children.map((child) =>
        next(child, spec, 'exited').catch(() => ({ maxRssMb: null })),
      );
      for (const child of children) if (child.connected) child.send({ kind: 'exit' });
      return (await Promise.all(replies)).map((reply) => reply.maxRssMb);
    },
    kill() {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

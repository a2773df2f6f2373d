/**
 * Runs `sideguard serve` (the built CLI) as a child process for multi-process tests: waits for
 * its `ready` line, reports the URLs it printed, and stops it with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cliPath, projectRoot } from '../support/cli.js';

/** A running `sideguard serve` process. */
export interface ServeProcess {
  readonly url: string;
  readonly upstreams: Readonly<Record<string, string>>;
  readonly output: () => string;
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `sideguard <args>` and resolves once it printed `ready {…}`. */
export function startServeProcess(
  args: readonly string[],
  environment: Record<string, string>,
): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, [cliPath, ...args], {
    cwd: projectRoot,
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const line = /^ready (\{.*\})$/m.exec(stdout)?.[1];
      if (line === undefined) return;
      const ready = JSON.parse(line) as { url: string; upstreams: Record<string, string> };
      resolve({
        url: ready.url,
        upstreams: ready.upstreams,
        output: () => stdout + stderr,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) =>
      reject(new Error(`sideguard exited (${code}) before it was ready:\n${stdout}${stderr}`)),
    );
  });
}

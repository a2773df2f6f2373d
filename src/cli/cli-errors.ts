/** Errors the CLI prints as one line on stderr, with the exit code they carry. */

/** Exit codes: 0 success, 1 a check failed (unsafe evidence, broken chain), 2 bad input or usage. */
export const ExitCode = { ok: 0, failed: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A one-line, actionable CLI error. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = ExitCode.usage) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/**
 * Local errors the sandbox throws to the code that started or drives it (bad options, a bad
 * fault plan, a control-plane call that failed). Wire errors go out in each provider's own shape.
 */
import { SideguardError } from '../core/errors.js';

/** A sandbox option, key table, state directory or fault plan is invalid. */
export class SandboxConfigError extends SideguardError {}

/** A control-plane call answered with a non-2xx status or could not be made. */
export class SandboxControlError extends SideguardError {
  /** HTTP status of the control-plane answer, or `undefined` when no answer arrived. */
  readonly status: number | undefined;

  constructor(
    code: string,
    message: string,
    options: { status?: number; data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, {
      ...(options.data === undefined ? {} : { data: options.data }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.status = options.status;
  }
}

/** Errors the verifier raises for bad input it was given (fixtures, output directories, names). */
import { SideguardError } from '../core/errors.js';

/** Bad verifier input: a missing or malformed fixture, an unknown scenario, an unusable directory. */
export class VerifierInputError extends SideguardError {
  constructor(message: string, data?: Record<string, unknown>) {
    super('verifier_input_invalid', message, data === undefined ? {} : { data });
  }
}

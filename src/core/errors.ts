/**
 * Local errors: what Sideguard throws to the code that called it. Operating conditions
 * (duplicate, expired, denied, conflict) are outcomes, never exceptions; these are for misuse,
 * bad configuration and broken invariants. Wire errors (HTTP/MCP) are a separate family.
 */

/** The root of every error Sideguard throws. Branch on `code`, not on the message. */
export class SideguardError extends Error {
  /** A stable, machine-readable code such as `canonical_json_invalid`. */
  readonly code: string;
  /** Extra, non-private details that help the caller act on the error. */
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }
}

/** Input broke an action contract or a data format the caller controls. */
export class ContractViolationError extends SideguardError {}

/** Authority evidence is malformed in a way that is a programming error, not an outcome. */
export class AuthorityEvidenceError extends SideguardError {}

/**
 * The proposal does not exist, belongs to another tenant, or the reader may not see it.
 * All three look exactly the same on purpose: access failures must not reveal existence.
 */
export class ProposalNotFoundError extends SideguardError {
  constructor(proposal: string) {
    super('proposal_not_found', `Proposal ${JSON.stringify(proposal)} was not found`, {
      data: { proposal },
    });
  }
}

/**
 * A store broke (or was asked to break) one of its invariants: an illegal status transition,
 * a corrupted record, a failed integrity check. Never retry blindly; investigate.
 */
export class StoreInvariantError extends SideguardError {}

/** Guard or key ring misconfiguration, detected when it is built or first used. */
export class ConfigurationError extends SideguardError {}

/** Crash loudly on a programmer error (TigerBeetle style): the process state is not trusted. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new StoreInvariantError('assertion_failed', `Assertion failed: ${message}`);
  }
}

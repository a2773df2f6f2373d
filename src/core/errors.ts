/**
 * Local errors: what Sideguard throws to the code that called it. Operating conditions
 * (duplicate, expired, denied, conflict) are outcomes, never exceptions; these are for misuse,
 * bad configuration and broken invariants. Wire errors (HTTP/MCP) are a separate family.
 */

/**
 * The brand every Sideguard error carries. `Symbol.for` makes it the same symbol in every copy of
 * the library loaded into one process (two installs, a bundled and an unbundled copy), where
 * `instanceof` only recognises errors of its own copy. Its value lists the error's class names,
 * most derived first.
 */
const SIDEGUARD_ERROR_BRAND: unique symbol = Symbol.for('sideguard.error') as never;

/** The class names from `target` up to and including `SideguardError`. */
function classNames(target: abstract new (...args: never[]) => unknown): readonly string[] {
  const names: string[] = [];
  for (
    let current: unknown = target;
    typeof current === 'function' && current !== Error;
    current = Object.getPrototypeOf(current)
  ) {
    names.push((current as { name: string }).name);
  }
  return Object.freeze(names);
}

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
    Object.defineProperty(this, SIDEGUARD_ERROR_BRAND, { value: classNames(new.target) });
  }

  /**
   * Whether `value` is an error of this class thrown by any copy of Sideguard, recognised by its
   * brand rather than by `instanceof` (which fails across copies): `SideguardError.is(error)`
   * for any Sideguard error, `StoreInvariantError.is(error)` for that class and its subclasses.
   */
  static is<E extends SideguardError>(
    this: { readonly prototype: E; readonly name: string },
    value: unknown,
  ): value is E {
    if (value instanceof (this as unknown as abstract new (...args: never[]) => E)) return true;
    return brandOf(value)?.includes(this.name) === true;
  }
}

function brandOf(value: unknown): readonly string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const names: unknown = (value as { [SIDEGUARD_ERROR_BRAND]?: unknown })[SIDEGUARD_ERROR_BRAND];
  return Array.isArray(names) && names.every((name) => typeof name === 'string')
    ? names
    : undefined;
}

/**
 * Whether `value` is an error thrown by any copy of Sideguard (see {@link SideguardError.is}),
 * so `value.code` is a stable code to branch on.
 */
export function isSideguardError(value: unknown): value is SideguardError {
  return (
    value instanceof SideguardError ||
    (brandOf(value)?.includes('SideguardError') === true &&
      typeof (value as { code?: unknown }).code === 'string')
  );
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

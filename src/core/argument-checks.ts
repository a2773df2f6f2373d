/**
 * Checks of the identifiers a host passes in (tenant, proposal, principal, reader, …), shared by
 * the guard's operations and the ledger tools, so every entry point refuses the same inputs.
 */
import { ContractViolationError } from './errors.js';

/**
 * Checks a caller-supplied identifier: a non-empty, well-formed (no lone surrogate) string of at
 * most 256 UTF-16 code units without control characters.
 * @throws ContractViolationError `invalid_argument` naming the argument (never echoing it).
 */
export function checkArgument(name: string, value: unknown): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > 256 ||
    /\p{Surrogate}/u.test(value) ||
    [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)
  ) {
    throw new ContractViolationError(
      'invalid_argument',
      `${name} must be a non-empty string of at most 256 characters without control characters or lone surrogates`,
      { data: { argument: name } },
    );
  }
  return value;
}

/**
 * Checks a tenant name: an identifier as {@link checkArgument}, spelled in Unicode NFC. Canonical
 * JSON normalises what it hashes, so two spellings of one name (NFC `é`, NFD `e` + U+0301) would
 * be two tenants in the store sharing one semantic effect key; a non-NFC name is refused rather
 * than silently merged with another tenant (decision 046).
 * @throws ContractViolationError `invalid_argument`, or `tenant_not_nfc` with the fix.
 */
export function checkTenant(value: unknown): string {
  const tenant = checkArgument('tenant', value);
  if (tenant.normalize('NFC') !== tenant) {
    throw new ContractViolationError(
      'tenant_not_nfc',
      'tenant must be spelled in Unicode NFC (the same name in another normal form would be another tenant with the same effect keys); pass tenant.normalize("NFC") and store tenant names that way',
      { data: { argument: 'tenant' } },
    );
  }
  return tenant;
}

/**
 * The checks every adapter applies to a `listProposals` query before it reads, so that each
 * store refuses the same bad input with the same `ContractViolationError`, and the order they
 * all return (expiry, then tenant, then proposal, by code point).
 */
import { ContractViolationError } from '../core/errors.js';
import type { ProposalListPosition, ProposalListQuery, ProposalRecord } from '../core/store.js';
import { ProposalStatus } from '../core/vocabulary.js';

/** `listProposals` limits: the default page and the largest one. */
export const PROPOSAL_LIST_LIMITS = { default: 100, max: 1000 } as const;

/** A query that passed {@link checkProposalListQuery}, its defaults applied. */
export interface CheckedProposalListQuery {
  readonly tenant: string | undefined;
  readonly statuses: readonly ProposalStatus[];
  readonly actionType: string | undefined;
  readonly limit: number;
  readonly after: ProposalListPosition | undefined;
}

const KNOWN_STATUSES: ReadonlySet<string> = new Set(Object.values(ProposalStatus));

function invalid(reason: string): never {
  throw new ContractViolationError(
    'store_query_invalid',
    `listProposals refused the query: ${reason}. Nothing was read.`,
    { data: { reason } },
  );
}

function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') invalid(`${name} must be a non-empty string`);
  return value;
}

function checkPosition(value: unknown): ProposalListPosition | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) {
    invalid('after must be { expiresAtMs, tenant, proposal } of the last proposal of a page');
  }
  const { expiresAtMs, tenant, proposal } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(expiresAtMs)) invalid('after.expiresAtMs must be a whole number');
  if (typeof tenant !== 'string' || tenant === '') invalid('after.tenant must be a tenant id');
  if (typeof proposal !== 'string' || proposal === '') {
    invalid('after.proposal must be a proposal id');
  }
  return { expiresAtMs: expiresAtMs as number, tenant, proposal };
}

/**
 * Checks a `listProposals` query and applies its defaults.
 * @throws ContractViolationError `store_query_invalid` naming what is wrong.
 */
export function checkProposalListQuery(query: ProposalListQuery): CheckedProposalListQuery {
  if (typeof query !== 'object' || query === null) invalid('the query must be an object');
  if (!Array.isArray(query.statuses)) invalid('statuses must be a list of proposal statuses');
  for (const status of query.statuses) {
    if (!KNOWN_STATUSES.has(status)) {
      invalid(`${JSON.stringify(status)} is not a proposal status`);
    }
  }
  const limit = query.limit ?? PROPOSAL_LIST_LIMITS.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > PROPOSAL_LIST_LIMITS.max) {
    invalid(`limit must be a whole number from 1 to ${PROPOSAL_LIST_LIMITS.max}, got ${limit}`);
  }
  return {
    tenant: optionalText(query.tenant, 'tenant'),
    statuses: [...new Set(query.statuses)],
    actionType: optionalText(query.actionType, 'actionType'),
    limit,
    after: checkPosition(query.after),
  };
}

/** Orders strings by Unicode code point, as SQLite (BINARY) and PostgreSQL (`COLLATE "C"`). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const left = [...a];
  const right = [...b];
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const difference = (left[index]?.codePointAt(0) ?? 0) - (right[index]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** The `listProposals` order: expiry, then tenant, then proposal id. */
export function compareListPositions(a: ProposalListPosition, b: ProposalListPosition): number {
  return (
    a.expiresAtMs - b.expiresAtMs ||
    compareCodePoints(a.tenant, b.tenant) ||
    compareCodePoints(a.proposal, b.proposal)
  );
}

/** The proposals of several ordered lists, merged in `listProposals` order, at most `limit`. */
export function mergeListed(
  lists: readonly (readonly ProposalRecord[])[],
  limit: number,
): ProposalRecord[] {
  return lists.flat().sort(compareListPositions).slice(0, limit);
}

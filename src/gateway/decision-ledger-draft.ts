/**
 * Turns a gateway decision event into the `gateway_decided` ledger draft that is sealed onto the
 * tenant's hash chain: the allow-listed fields only (I8), with every string made safe for
 * Canonical JSON (no lone surrogates, bounded length) so an agent's hostile tool name or path can
 * neither poison a batch nor bloat the chain.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { LedgerEventDraft } from '../core/ledger.js';
import { GATEWAY_DECIDED_DATA_KEYS, LedgerEventType } from '../core/vocabulary.js';
import type { GatewayDecisionEvent } from './decision-log.js';

/** The longest string a `gateway_decided` event keeps, in UTF-16 code units. */
export const DECISION_FIELD_MAX_LENGTH = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `value` with every lone surrogate replaced by U+FFFD (`String#toWellFormed`, ES2024). */
const wellFormed = (value: string): string => value.replace(LONE_SURROGATE, '\uFFFD');

/** A string as the ledger keeps it: well-formed UTF-16, cut to the limit with an ellipsis. */
export function ledgerSafeString(value: string): string {
  const whole = wellFormed(value);
  if (whole.length <= DECISION_FIELD_MAX_LENGTH) return whole;
  // Cutting may split a surrogate pair: make it well formed again after the cut.
  return `${wellFormed(whole.slice(0, DECISION_FIELD_MAX_LENGTH - 1))}…`;
}

/** The `gateway_decided` draft of one decision. Tenant-level: `proposal` is null. */
export function decisionLedgerDraft(event: GatewayDecisionEvent): LedgerEventDraft {
  const fields: Record<string, string | number | null | undefined> = {
    door: event.door,
    decision: event.decision,
    reason: event.reason,
    upstream: event.upstream,
    subject: event.subject,
    binding: event.binding,
    agent: event.agent,
    principal: event.principal,
    proposal: event.proposal,
    outcome: event.outcome,
    code: event.code,
    status: event.status,
    requestDigest: event.requestDigest,
  };
  const data: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (!GATEWAY_DECIDED_DATA_KEYS.has(key)) throw new TypeError(`not an allow-listed key ${key}`);
    if (value === undefined) continue;
    if (typeof value === 'number') {
      data[key] = Number.isSafeInteger(value) ? value : null;
    } else {
      data[key] = value === null ? null : ledgerSafeString(value);
    }
  }
  return {
    proposal: null,
    type: LedgerEventType.gateway_decided,
    at: event.at,
    actionType: null,
    status: null,
    revision: null,
    data,
  };
}

/**
 * Turns a gateway decision event into the `gateway_decided` ledger draft that is sealed onto the
 * tenant's hash chain: the allow-listed fields only (I8), with every string made safe for
 * Canonical JSON (no lone surrogates, bounded length) so an agent's hostile tool name or path can
 * neither poison a batch nor bloat the chain.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { LedgerEventDraft } from '../core/ledger.js';
import { GATEWAY_DECIDED_DATA_FIELDS, LedgerEventType } from '../core/vocabulary.js';
import type { GatewayDecisionEvent } from './decision-log.js';

/** The longest string a `gateway_decided` event keeps, in UTF-16 code units. */
export const DECISION_FIELD_MAX_LENGTH = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Any surrogate at all: a string without one is well-formed as it is (the common case). */
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

/** `value` with every lone surrogate replaced by U+FFFD (`String#toWellFormed`, ES2024). */
const wellFormed = (value: string): string =>
  ANY_SURROGATE.test(value) ? value.replace(LONE_SURROGATE, '\uFFFD') : value;

/** A string as the ledger keeps it: well-formed UTF-16, cut to the limit with an ellipsis. */
export function ledgerSafeString(value: string): string {
  const whole = wellFormed(value);
  if (whole.length <= DECISION_FIELD_MAX_LENGTH) return whole;
  // Cutting may split a surrogate pair: make it well formed again after the cut.
  return `${wellFormed(whole.slice(0, DECISION_FIELD_MAX_LENGTH - 1))}…`;
}

/** The event fields a draft carries, in the order they are written: the allow-list (I8). */
const DATA_FIELDS = GATEWAY_DECIDED_DATA_FIELDS satisfies readonly (keyof GatewayDecisionEvent)[];

/** The `gateway_decided` draft of one decision. Tenant-level: `proposal` is null. */
export function decisionLedgerDraft(event: GatewayDecisionEvent): LedgerEventDraft {
  const data: Record<string, JsonValue> = {};
  for (const key of DATA_FIELDS) {
    const value: string | number | null | undefined = event[key];
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

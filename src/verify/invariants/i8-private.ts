/**
 * I8 private stays private: no private value of the scenario appears in the ledger, a gateway
 * decision event carries only its allow-listed keys, and an erased proposal keeps no private
 * snapshot in the store.
 */
import { GATEWAY_DECIDED_DATA_KEYS } from '../../core/vocabulary.js';
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictFrom } from './invariant-kit.js';

export function judgePrivate(model: EvidenceModel): InvariantVerdict {
  const ledgerText = JSON.stringify(model.events);
  const leaked = model.privateValues.filter((secret) => ledgerText.includes(secret));
  const offList = model.events.filter(
    (e) =>
      e.type === 'gateway_decided' &&
      Object.keys(e.data).some((key) => !GATEWAY_DECIDED_DATA_KEYS.has(key)),
  );
  const erasedIds = model.events.filter((e) => e.type === 'erased').map((e) => e.proposal);
  const notGone = model.records.filter(
    (record) => erasedIds.includes(record.proposal) && record.snapshotPresent !== false,
  );
  return verdictFrom(
    'I8',
    [
      ...leaked.map(() => 'a private value of the case appears in the ledger'),
      ...offList.map(
        (e) => `gateway decision event ${e.sequence} carries data outside its allow-list`,
      ),
      ...notGone.map((r) => `erased proposal ${r.proposal} still has its private snapshot`),
    ],
    true,
    `none of ${model.privateValues.length} private value(s) appears in the ledger${erasedIds.length > 0 ? `; ${erasedIds.length} erased proposal(s) keep no snapshot and leave a tombstone` : ''}`,
    Number.POSITIVE_INFINITY,
  );
}

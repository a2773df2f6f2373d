/** I7 tamper-evident ledger: the exported chain verifies and ends at the store's recorded head. */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictOf } from './invariant-kit.js';

export function judgeTamperEvident(model: EvidenceModel): InvariantVerdict {
  return verdictOf(
    'I7',
    model.chain.valid ? 'pass' : 'fail',
    `hash chain ${model.chain.valid ? 'intact' : 'broken'}: ${model.chain.detail}`,
  );
}

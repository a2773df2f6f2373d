/**
 * I1 once: at most one provider write per semantic effect and operation, and at most one per
 * idempotency key, counted from the provider's own truth (only `create` writes make a second
 * effect; a repeated `set` of the same fields changes nothing).
 */
import { labelOf, type Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

export function checkOneWritePerEffect(index: EvidenceIndex): Violation[] {
  const { evidence } = index;
  const byEffect = new Map<string, string[]>();
  const byKey = new Map<string, string[]>();
  const violations: Violation[] = [];
  for (const write of evidence.writes) {
    if (write.kind !== 'create') continue;
    if (write.effect !== null) {
      const key = `${write.effect}|${write.operation}`;
      const ids = byEffect.get(key) ?? [];
      ids.push(write.objectId);
      byEffect.set(key, ids);
      if (ids.length === 2) {
        violations.push({
          invariant: 'one_write_per_effect',
          effect: labelOf(evidence, write.effect),
          message: `the provider applied ${write.operation} twice for one effect (${ids.join(', ')})`,
        });
      }
    }
    if (write.idempotencyKey !== null) {
      const ids = byKey.get(write.idempotencyKey) ?? [];
      ids.push(write.objectId);
      byKey.set(write.idempotencyKey, ids);
      if (ids.length === 2 && write.effect === null) {
        violations.push({
          invariant: 'one_write_per_effect',
          effect: '-',
          message: `the provider applied two writes with one idempotency key (${ids.join(', ')})`,
        });
      }
    }
  }
  return violations;
}

/**
 * I1 once: at most one provider write per semantic effect and operation, counted from the
 * sandbox's receipts — and the receipts must agree with the provider's own state in the same
 * export (every object carrying an effect has a receipt; every receipt names an object), so an
 * edited receipt list cannot hide a second write that the state still holds.
 */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { short, verdictOf } from './invariant-kit.js';

/** Where the export contradicts itself, in words (empty when it agrees). */
export function exportContradictions(model: EvidenceModel): string[] {
  const problems: string[] = [];
  if (model.effectObjects === null || model.stateObjectIds === null) return problems;
  const written = new Set(model.writes.map((write) => `${write.provider}:${write.objectId}`));
  for (const object of model.effectObjects) {
    if (!written.has(`${object.provider}:${object.id}`)) {
      problems.push(
        `${object.provider} object ${object.id} carries effect ${short(object.effectKey)} in the provider's state but has no receipt`,
      );
    }
  }
  for (const write of model.writes) {
    if (!model.stateObjectIds.has(`${write.provider}:${write.objectId}`)) {
      problems.push(
        `receipt ${write.objectId} names no ${write.provider} object in the provider's state`,
      );
    }
  }
  return problems;
}

export function judgeOnce(model: EvidenceModel): InvariantVerdict {
  const contradictions = exportContradictions(model);
  if (contradictions.length > 0) {
    return verdictOf(
      'I1',
      'fail',
      `the sandbox export contradicts itself: ${contradictions.slice(0, 2).join('; ')}`,
    );
  }
  const counts = new Map<string, { effect: string; operation: string; count: number }>();
  for (const write of model.writes) {
    if (write.effectKey === null) continue;
    const operation = `${write.provider}.${write.operation}`;
    const key = `${write.effectKey}|${operation}`;
    const entry = counts.get(key) ?? { effect: write.effectKey, operation, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  }
  const over = [...counts.values()].find((entry) => entry.count > 1);
  if (over !== undefined) {
    return verdictOf(
      'I1',
      'fail',
      `the sandbox committed ${over.count} ${over.operation} writes for effect ${short(over.effect)}`,
    );
  }
  const unattributed = model.writes.filter((write) => write.effectKey === null).length;
  return verdictOf(
    'I1',
    'pass',
    `${counts.size} (effect, operation) pair(s), each written at most once per the sandbox's receipts (which agree with its state)${unattributed > 0 ? `; ${unattributed} write(s) by other actors carry no effect` : ''}`,
  );
}

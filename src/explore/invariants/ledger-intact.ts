/**
 * I7 tamper-evident ledger: the chain verifies from genesis, ends at the store's own head, and
 * still holds every event a commit acknowledged before any crash, unchanged.
 */
import {
  GENESIS_HASH,
  type LedgerEvent,
  type LedgerVerification,
  verifyLedgerChain,
} from '../../core/ledger.js';
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'ledger_intact';

/** How often the full re-hash runs; the links are checked on every schedule. */
export const FULL_CHAIN_CHECK_EVERY = 16;

/**
 * Checks the chain. Links, sequences, the head and every acknowledged event are checked always;
 * re-hashing every event (the costly part) runs when `rehash` is set: on a sample of schedules
 * and on every failing one.
 */
export function checkLedgerIntact(index: EvidenceIndex, rehash: boolean): Violation[] {
  const { evidence } = index;
  const verdict = rehash ? verifyLedgerChain(evidence.events) : verifyLinks(evidence.events);
  if (verdict.kind === 'invalid') {
    return [
      { invariant: INVARIANT, effect: '-', message: `the chain is broken: ${verdict.message}` },
    ];
  }
  if (
    verdict.head?.sequence !== evidence.head?.sequence ||
    verdict.head?.hash !== evidence.head?.hash
  ) {
    return [
      {
        invariant: INVARIANT,
        effect: '-',
        message: `the chain ends at ${verdict.head?.sequence ?? 0}, the store's head is ${evidence.head?.sequence ?? 0}`,
      },
    ];
  }
  const bySequence = new Map(evidence.events.map((event) => [event.sequence, event.hash]));
  for (const commit of evidence.commits) {
    for (const event of commit.events) {
      if (bySequence.get(event.sequence) !== event.hash) {
        return [
          index.about(
            INVARIANT,
            event.proposal,
            `acknowledged event ${event.sequence} (${event.type}) is missing or changed in the durable ledger`,
          ),
        ];
      }
    }
  }
  return [];
}

/** The chain's links only (sequence and previous hash), without re-hashing. */
function verifyLinks(events: readonly LedgerEvent[]): LedgerVerification {
  let previous = GENESIS_HASH;
  for (const [position, event] of events.entries()) {
    if (event.sequence !== position + 1 || event.previousHash !== previous) {
      return {
        kind: 'invalid',
        index: position,
        sequence: event.sequence,
        reason: event.sequence !== position + 1 ? 'sequence_gap' : 'previous_hash_mismatch',
        message: `entry ${position + 1} does not link to the one before it`,
      };
    }
    previous = event.hash;
  }
  const last = events.at(-1);
  return {
    kind: 'valid',
    count: events.length,
    head: last === undefined ? undefined : { sequence: last.sequence, hash: last.hash },
  };
}

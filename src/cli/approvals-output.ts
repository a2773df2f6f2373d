/**
 * How the approvals commands print: plain lines for people (every value from a proposal shown
 * with control and bidirectional characters escaped, so a hostile preview cannot rewrite the
 * terminal) and JSON for scripts.
 */
import type {
  PendingItem,
  ProposalDetails,
  ProposalTimeline,
} from '../approvals/approvals-types.js';

/** Text safe to print on a terminal: control, bidi and other invisible format characters escaped. */
export function printable(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return (text ?? 'null').replace(
    /[\p{Cc}\p{Cf}\u2028\u2029]/gu,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}

const tally = (item: { approvals: { required: number; approvedBy: readonly string[] } }) =>
  `${item.approvals.approvedBy.length}/${item.approvals.required}`;

/** The inbox as lines: one header, one line per proposal. */
export function pendingLines(items: readonly PendingItem[], nowMs: number): string[] {
  if (items.length === 0) return ['Nothing waits for your approval.'];
  return [
    `${items.length} proposal(s) wait for your approval, soonest to expire first:`,
    ...items.map((item) => {
      const minutes = Math.max(0, Math.floor((item.expiresAtMs - nowMs) / 60_000));
      return [
        printable(item.proposal),
        printable(item.actionType),
        `tenant ${printable(item.tenant)}`,
        `by ${printable(item.agent ?? item.principal)}`,
        `approvals ${tally(item)}`,
        `expires in ${minutes} min`,
        ...(item.preview === undefined ? [] : [`preview ${printable(item.preview)}`]),
      ].join('  ');
    }),
  ];
}

/** One proposal, field by field. */
export function detailLines(details: ProposalDetails): string[] {
  const decided = details.approvals.authorities.map(
    (authority) =>
      `${printable(authority.id)}=${authority.decision ?? 'pending'}${authority.at === null ? '' : `@${authority.at}`}`,
  );
  return [
    `proposal     ${printable(details.proposal)} (tenant ${printable(details.tenant)})`,
    `action       ${printable(details.actionType)}`,
    `status       ${details.status ?? 'erased'}${details.reasonCode === null ? '' : ` (${printable(details.reasonCode)})`}`,
    `policy       ${details.policy.decision}: ${printable(details.policy.reasonCode)}`,
    `requested by ${printable(details.principal)}${details.agent === null ? '' : ` via agent ${printable(details.agent)}`}`,
    `created      ${details.createdAt}`,
    `expires      ${details.expiresAt}`,
    ...(details.preview === undefined ? [] : [`preview      ${printable(details.preview)}`]),
    ...details.protectedFields.map(
      (field) => `protected    ${printable(field.name)} = ${printable(field.value)}`,
    ),
    ...(details.commitment === undefined
      ? []
      : [
          `commitment   ${details.commitment.algorithm} ${printable(details.commitment.value)} (key ${printable(details.commitment.keyHandle)}:${details.commitment.keyVersion})`,
        ]),
    `approvals    ${tally(details)} (${decided.join(', ') || 'no authorities'})${details.approvals.rejectedBy === null ? '' : `; rejected by ${printable(details.approvals.rejectedBy)}`}`,
    ...details.receipts.map(
      (receipt) => `receipt      ${printable(receipt.provider)} ${printable(receipt.id)}`,
    ),
    `you          ${details.viewer.mayDecide ? 'may approve or deny' : details.viewer.mayResolve ? 'may resolve' : 'may only read'}`,
  ];
}

/** A proposal's ledger history, one event per line. */
export function timelineLines(timeline: ProposalTimeline): string[] {
  return [
    `proposal ${printable(timeline.proposal)} (tenant ${printable(timeline.tenant)}), ${timeline.events.length} ledger event(s); chain ${timeline.chain.kind === 'valid' ? 'verifies' : `BROKEN: ${printable(timeline.chain)}`}`,
    ...timeline.events.map(
      (event) =>
        `  #${event.sequence} ${event.at} ${event.type}${event.status === null ? '' : ` → ${event.status}`}${typeof event.data.reasonCode === 'string' ? ` (${printable(event.data.reasonCode)})` : ''}`,
    ),
  ];
}

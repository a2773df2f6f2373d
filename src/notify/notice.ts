/**
 * The notices Sideguard sends to people's channels: "approval needed" when a proposal starts
 * waiting for authority, "stuck proposal" when the guard cannot settle one by itself. Built from
 * the guard's allow-listed events only, so a notice never carries inputs or private data (I8).
 */
import type { GuardEvent } from '../core/guard.js';

/** The kinds of notice. */
export const NoticeType = {
  approval_needed: 'approval_needed',
  stuck_proposal: 'stuck_proposal',
} as const;
export type NoticeType = (typeof NoticeType)[keyof typeof NoticeType];

/** One notice, as the webhook body's JSON. */
export interface Notice {
  /** Unique per notice; a receiver deduplicates retried deliveries by it. */
  readonly id: string;
  readonly type: NoticeType;
  /** ISO 8601. */
  readonly occurredAt: string;
  readonly tenant: string;
  readonly proposal: string;
  readonly actionType: string | null;
  readonly status: string | null;
  readonly reasonCode: string | null;
  /** Where an approver or operator acts on it, when a console URL is configured. */
  readonly url?: string;
}

/** The events that move a proposal into a status the guard cannot leave without a person. */
const STUCK_EVENTS: ReadonlySet<string> = new Set([
  'verification_unresolved',
  'compensation_required',
  'partial_commit',
]);

/** Which notice a guard event calls for, if any. */
export function noticeTypeOf(event: GuardEvent): NoticeType | undefined {
  if (event.proposal === null) return undefined;
  // The event that stores a new proposal carries its first status.
  if (event.status === 'awaiting_authority' && event.type === 'idempotency_decided') {
    return NoticeType.approval_needed;
  }
  if (STUCK_EVENTS.has(event.type)) return NoticeType.stuck_proposal;
  return undefined;
}

/** Options of {@link noticeOfGuardEvent}. */
export interface NoticeContext {
  readonly atMs: number;
  /** The console's base URL; the notice links to `/proposals/<id>` on it. */
  readonly consoleUrl?: string;
}

/** The notice a guard event calls for, or undefined. */
export function noticeOfGuardEvent(event: GuardEvent, context: NoticeContext): Notice | undefined {
  const type = noticeTypeOf(event);
  if (type === undefined || event.proposal === null) return undefined;
  const base = context.consoleUrl?.replace(/\/+$/, '');
  return {
    id: `${event.tenant}:${event.sequence}`,
    type,
    occurredAt: new Date(context.atMs).toISOString(),
    tenant: event.tenant,
    proposal: event.proposal,
    actionType: event.actionType,
    status: event.status,
    reasonCode: event.reasonCode,
    ...(base === undefined
      ? {}
      : { url: `${base}/proposals/${encodeURIComponent(event.proposal)}` }),
  };
}

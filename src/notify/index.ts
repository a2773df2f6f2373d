/** Notifications: notices built from guard events, delivered to a signed webhook. */
export { type Notice, NoticeType, noticeOfGuardEvent, noticeTypeOf } from './notice.js';
export {
  createWebhookNotifier,
  retryDelayMs,
  type WebhookDropReason,
  type WebhookNotifier,
  type WebhookNotifierConfig,
  type WebhookNotifierStats,
} from './webhook-notifier.js';
export {
  type VerifyWebhookSignatureOptions,
  verifyWebhookSignature,
  WEBHOOK_SECRET_MIN_LENGTH,
  WEBHOOK_SIGNATURE_HEADER,
  type WebhookSignatureVerdict,
  webhookSignature,
  webhookSignatureHeader,
} from './webhook-signature.js';

/**
 * The gateway's notifications from its config: a webhook notifier fed by the guard's event sink.
 * The secret comes from the environment variable the config names, never from the config file.
 */
import { ConfigurationError } from '../core/errors.js';
import type { GuardEventSink } from '../core/guard.js';
import type { GatewayNotificationsConfig } from '../gateway/config-types.js';
import { noticeOfGuardEvent } from './notice.js';
import { createWebhookNotifier, type WebhookNotifier } from './webhook-notifier.js';
import { WEBHOOK_SECRET_MIN_LENGTH } from './webhook-signature.js';

/** Notifications wired to a guard. */
export interface GatewayNotifications {
  /** Pass to the guard (`events`). */
  readonly events: GuardEventSink;
  readonly webhook: WebhookNotifier;
  close(): Promise<void>;
}

/** Options of {@link openGatewayNotifications}. */
export interface GatewayNotificationsOptions {
  readonly config: GatewayNotificationsConfig | undefined;
  readonly consoleUrl?: string | undefined;
  /** @default process.env */
  readonly environment?: NodeJS.ProcessEnv;
  /** One line per dropped notice and per failed attempt. @default stderr */
  readonly log?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * The notifications a config asks for, or undefined when it asks for none.
 * @throws ConfigurationError when the secret's variable is unset or too short.
 */
export function openGatewayNotifications(
  options: GatewayNotificationsOptions,
): GatewayNotifications | undefined {
  const webhook = options.config?.webhook;
  if (webhook === undefined) return undefined;
  const secret = (options.environment ?? process.env)[webhook.secretEnv];
  if (secret === undefined || secret.length < WEBHOOK_SECRET_MIN_LENGTH) {
    throw new ConfigurationError(
      'webhook_secret_missing',
      `notifications.webhook.secretEnv names ${webhook.secretEnv}, which is ${secret === undefined ? 'not set' : `shorter than ${WEBHOOK_SECRET_MIN_LENGTH} characters`}; set it to a shared secret (e.g. \`export ${webhook.secretEnv}="$(openssl rand -hex 32)"\`) and give the same value to the receiver`,
    );
  }
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = options.now ?? Date.now;
  const notifier = createWebhookNotifier({
    url: webhook.url,
    secret,
    ...(webhook.timeoutMs === undefined ? {} : { timeoutMs: webhook.timeoutMs }),
    ...(webhook.maxAttempts === undefined ? {} : { maxAttempts: webhook.maxAttempts }),
    ...(webhook.queueLimit === undefined ? {} : { queueLimit: webhook.queueLimit }),
    now,
    onDrop: (notice, reason, lastError) =>
      log(
        `sideguard notifications: dropped ${notice.type} notice for proposal ${notice.proposal} (${reason}${lastError === null ? '' : `: ${lastError}`}); dropped so far: ${notifier.stats().dropped}`,
      ),
    onRetry: (notice, attempt, error) =>
      log(
        `sideguard notifications: ${notice.type} notice for ${notice.proposal}, attempt ${attempt} failed (${error}); retrying`,
      ),
  });
  return {
    events: (event) => {
      const notice = noticeOfGuardEvent(event, {
        atMs: now(),
        ...(options.consoleUrl === undefined ? {} : { consoleUrl: options.consoleUrl }),
      });
      if (notice !== undefined) notifier.notify(notice);
    },
    webhook: notifier,
    close: () => notifier.close(),
  };
}

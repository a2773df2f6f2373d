/**
 * The shapes every provider folder fills in: operations (parse, then execute against state),
 * error shapes, roles, credentials and seed. The data plane runs them; providers hold no I/O.
 */

/** A JSON value as stored in sandbox state and sent on the wire. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A stored record: one provider object (a refund, a ticket, an issue). */
export type JsonRecord = { readonly [key: string]: JsonValue };

/** The built-in providers. */
export const ProviderName = {
  payments: 'payments',
  crm: 'crm',
  issues: 'issues',
  orders: 'orders',
  retail: 'retail',
} as const;
export type ProviderName = (typeof ProviderName)[keyof typeof ProviderName];

/** Whether an operation can change provider state. */
export const OperationKind = { read: 'read', write: 'write' } as const;
export type OperationKind = (typeof OperationKind)[keyof typeof OperationKind];

/** What the provider answers; `body` is serialised as JSON unless `undefined` (no body). */
export interface ProviderResponse {
  readonly status: number;
  readonly body?: JsonValue;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A request as an operation sees it, after routing, size limits and identity. */
export interface ProviderRequest {
  readonly method: string;
  readonly pathname: string;
  /** Path parameters by name, already percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Query pairs in arrival order, percent-decoded. */
  readonly query: readonly (readonly [string, string])[];
  /** Lower-cased `Content-Type` without parameters, or `''` when absent. */
  readonly contentType: string;
  readonly body: Buffer;
  /** The data-plane origin (`http://127.0.0.1:port`), for `self`/`url` fields. */
  readonly origin: string;
}

/** The result of parsing: either a typed input (and the semantic effect it carries) or a 4xx. */
export type ParseResult<Input> =
  | { readonly kind: 'valid'; readonly input: Input; readonly effectKey: string | null }
  | { readonly kind: 'invalid'; readonly response: ProviderResponse };

/** One record to store (whole-record replacement) as part of a committed write. */
export interface StateChange {
  readonly provider: string;
  readonly collection: string;
  readonly id: string;
  readonly value: JsonRecord;
}

/** What a committed write tells the observers: the object it made or changed. */
export interface ReceiptDraft {
  readonly objectId: string;
  /** Money moved by the write, in integer minor units, when it moves money. */
  readonly amountMinor?: number;
  readonly currency?: string;
  /** Small, non-private facts about the write (the charge a refund belongs to, a new status). */
  readonly details?: Readonly<Record<string, JsonValue>>;
}

/** What executing an operation produced: a response and, for a write, what to commit. */
export interface ExecuteResult {
  readonly response: ProviderResponse;
  readonly write?: {
    readonly changes: readonly StateChange[];
    readonly receipt: ReceiptDraft;
  };
}

/** Read access to all provider state (orders read payments), plus ids and time. */
export interface ExecuteContext {
  get(provider: string, collection: string, id: string): JsonRecord | undefined;
  /** Records of one collection in insertion order. */
  list(provider: string, collection: string): readonly JsonRecord[];
  /** A new object id with the given prefix (`re`, `ch`), deterministic from seed and sequence. */
  newId(prefix: string): string;
  /** The sandbox clock, in milliseconds since the epoch. */
  nowMs(): number;
}

/** One operation of a provider, declared once; `parse` must not read state. */
export interface OperationDefinition<Input = unknown> {
  /** Stable name used by fault plans, roles and observations (`create_refund`). */
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path pattern with `:name` segments, e.g. `/v1/refunds/:id`. */
  readonly path: string;
  readonly kind: OperationKind;
  /** Validation only: a failure here is answered before execution and never saved. */
  parse(request: ProviderRequest): ParseResult<Input>;
  /** Runs synchronously against state; provider rules live here. */
  execute(input: Input, context: ExecuteContext, request: ProviderRequest): ExecuteResult;
}

/** Why a request failed identity. */
export const AuthFailure = {
  missing: 'missing',
  unknown: 'unknown',
  forbidden: 'forbidden',
} as const;
export type AuthFailure = (typeof AuthFailure)[keyof typeof AuthFailure];

/** The wire-error builders of a provider, so every rejection looks like that provider. */
export interface ProviderErrorShapes {
  notFoundRoute(method: string, pathname: string): ProviderResponse;
  auth(
    failure: AuthFailure,
    detail: { operation?: string; credentialHint?: string },
  ): ProviderResponse;
  reservedHeader(header: string): ProviderResponse;
  payloadTooLarge(limitBytes: number): ProviderResponse;
  rateLimited(retryAfterSeconds: number): ProviderResponse;
  /** A provider-side failure (fault `error_before_write` / `error_after_write`). */
  internal(status: number): ProviderResponse;
  /** The transport could not be read (aborted body, bad encoding). */
  badRequest(message: string): ProviderResponse;
}

/** How a provider deduplicates retried writes, when it does (Stripe's `Idempotency-Key`). */
export interface IdempotencySupport {
  /** Lower-cased request header carrying the key. */
  readonly header: string;
  /** Longest key accepted, in characters. */
  readonly maxKeyLength: number;
  invalidKey(key: string): ProviderResponse;
  parametersMismatch(key: string): ProviderResponse;
  inFlight(key: string): ProviderResponse;
  /** Extra headers on a replayed response (`Idempotent-Replayed: true`). */
  replayHeaders(originalRequestId: string): Readonly<Record<string, string>>;
}

/** A default API key shipped with a provider, for tests and local use. */
export interface DefaultApiKey {
  readonly key: string;
  readonly role: string;
  readonly description: string;
}

/** Everything about one provider; adding a provider is adding a folder exporting one of these. */
export interface ProviderDefinition {
  readonly name: string;
  /** Path prefix this provider owns on the data plane (`/v1/`). */
  readonly pathPrefix: string;
  /** Providers whose state this one reads (orders reads payments). */
  readonly dependsOn?: readonly string[];
  readonly operations: readonly OperationDefinition[];
  /** Role → operation names it may call. */
  readonly roles: Readonly<Record<string, readonly string[]>>;
  readonly defaultKeys: readonly DefaultApiKey[];
  /** Extracts the API key from the request headers; `undefined` when none was sent. */
  credential(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined;
  readonly errors: ProviderErrorShapes;
  /** Response header that names the request (`Request-Id` for Stripe). */
  readonly requestIdHeader: string;
  /** Formats a request id in the provider's style from a base62 token (`req_…`). */
  requestId(token: string): string;
  /** Adds request-specific fields to a response (HubSpot's `correlationId` on errors). */
  finalize?(response: ProviderResponse, requestId: string): ProviderResponse;
  readonly idempotency?: IdempotencySupport;
  /**
   * The semantic effect key an object in state carries, per this provider's convention (a
   * refund's `metadata[sideguard_effect]`), or `null`. Lets a verifier match the provider's
   * objects with its receipts without knowing the provider's shapes.
   */
  effectOf?(collection: string, record: JsonRecord): string | null;
  /** Seed records per collection, deterministic from `seed`; small enough to read. */
  seed(seed: number, nowMs: number): Readonly<Record<string, readonly JsonRecord[]>>;
}

/**
 * Declares an operation with a typed input; the data plane only sees the erased form.
 * The cast is sound because `parse` and `execute` of one definition travel together.
 */
export function defineOperation<Input>(operation: OperationDefinition<Input>): OperationDefinition {
  return operation as unknown as OperationDefinition;
}

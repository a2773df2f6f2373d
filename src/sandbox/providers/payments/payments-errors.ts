/**
 * Stripe's wire errors: `{ error: { type, code?, message, param? } }` with Stripe's statuses,
 * so the official client raises the same error classes it would against Stripe.
 */
import type {
  IdempotencySupport,
  ProviderErrorShapes,
  ProviderResponse,
} from '../../sandbox-types.js';

/** Stripe error types used by the sandbox. */
export const StripeErrorType = {
  invalidRequest: 'invalid_request_error',
  idempotency: 'idempotency_error',
  api: 'api_error',
} as const;
export type StripeErrorType = (typeof StripeErrorType)[keyof typeof StripeErrorType];

/** Builds a Stripe error response. */
export function stripeError(
  status: number,
  type: StripeErrorType,
  message: string,
  options: { code?: string; param?: string; headers?: Record<string, string> } = {},
): ProviderResponse {
  return {
    status,
    body: {
      error: {
        type,
        message,
        ...(options.code === undefined ? {} : { code: options.code }),
        ...(options.param === undefined ? {} : { param: options.param }),
      },
    },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  };
}

/** `No such charge: 'ch_…'` (404 on retrieval, 400 when referenced by a parameter). */
export function resourceMissing(
  status: 400 | 404,
  kind: string,
  id: string,
  param: string,
): ProviderResponse {
  return stripeError(status, StripeErrorType.invalidRequest, `No such ${kind}: '${id}'`, {
    code: 'resource_missing',
    param,
  });
}

/** `Received unknown parameter: …`. */
export function unknownParameter(name: string): ProviderResponse {
  return stripeError(400, StripeErrorType.invalidRequest, `Received unknown parameter: ${name}`, {
    code: 'parameter_unknown',
    param: name,
  });
}

/** Redacts a key the way Stripe echoes it: prefix, stars, last four characters. */
function redactKey(key: string): string {
  const prefix = /^(sk|rk|pk)_(test|live)_/.exec(key)?.[0] ?? '';
  return `${prefix}${'*'.repeat(Math.max(4, key.length - prefix.length - 4))}${key.slice(-4)}`;
}

export const paymentsErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) =>
    stripeError(
      404,
      StripeErrorType.invalidRequest,
      `Unrecognized request URL (${method}: ${pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
    ),
  auth: (failure, detail) => {
    if (failure === 'missing') {
      return stripeError(
        401,
        StripeErrorType.invalidRequest,
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
        { headers: { 'WWW-Authenticate': 'Basic realm="Stripe"' } },
      );
    }
    if (failure === 'unknown') {
      // Stripe answers an unknown key with 401, not 403 (checked against Stripe's docs and client).
      return stripeError(
        401,
        StripeErrorType.invalidRequest,
        `Invalid API Key provided: ${redactKey(detail.credentialHint ?? '')}`,
        {
          headers: { 'WWW-Authenticate': 'Basic realm="Stripe"' },
        },
      );
    }
    return stripeError(
      403,
      StripeErrorType.invalidRequest,
      `The provided key '${redactKey(detail.credentialHint ?? '')}' does not have the required permissions for this endpoint. Having the '${detail.operation ?? 'unknown'}' permission would allow this request to continue.`,
    );
  },
  reservedHeader: (header) =>
    stripeError(
      400,
      StripeErrorType.invalidRequest,
      `The header ${header} is reserved by the Sideguard sandbox and cannot be sent to the data plane.`,
      {
        code: 'reserved_header',
      },
    ),
  payloadTooLarge: (limitBytes) =>
    stripeError(
      413,
      StripeErrorType.invalidRequest,
      `Request body too large: the limit is ${limitBytes} bytes.`,
    ),
  rateLimited: (retryAfterSeconds) =>
    stripeError(
      429,
      StripeErrorType.invalidRequest,
      'Request rate limit exceeded. You can learn more about rate limits here https://stripe.com/docs/rate-limits.',
      { code: 'rate_limit', headers: { 'Retry-After': String(retryAfterSeconds) } },
    ),
  internal: (status) => stripeError(status, StripeErrorType.api, 'An unknown error occurred'),
  badRequest: (message) => stripeError(400, StripeErrorType.invalidRequest, message),
};

export const paymentsIdempotency: IdempotencySupport = {
  header: 'idempotency-key',
  maxKeyLength: 255,
  invalidKey: (key) =>
    stripeError(
      400,
      StripeErrorType.invalidRequest,
      `Invalid Idempotency-Key: keys must be 1 to 255 characters long (got ${key.length}).`,
      { param: 'Idempotency-Key' },
    ),
  parametersMismatch: (key) =>
    stripeError(
      400,
      StripeErrorType.idempotency,
      `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
    ),
  inFlight: () =>
    stripeError(
      409,
      StripeErrorType.invalidRequest,
      'There is currently another in-progress request using this idempotency key. Retry this request later.',
      { code: 'idempotency_key_in_use' },
    ),
  replayHeaders: (originalRequestId) => ({
    'Idempotent-Replayed': 'true',
    'Original-Request': originalRequestId,
  }),
};

/**
 * The HubSpot-shaped CRM provider: tickets read and patched through `/crm/v3/objects/tickets`,
 * with HubSpot's error shape. Effect convention: the guard sets the ticket property
 * `sideguard_effect` to its effect key in the same PATCH.
 */
import {
  bearerToken,
  isJsonObject,
  isSafeId,
  parseJsonBody,
  stringMember,
  unknownKeys,
} from '../../provider-kit.js';
import {
  defineOperation,
  type JsonRecord,
  type ProviderDefinition,
  type ProviderErrorShapes,
  type ProviderResponse,
} from '../../sandbox-types.js';
import { buildSeedCatalogue, seedEpochSeconds } from '../../seed-catalogue.js';
import { createSeededRandom, pick } from '../../seeded-random.js';

const provider = 'crm';

/** Ticket property that carries the guard's semantic effect key. */
export const crmEffectProperty = 'sideguard_effect';

/** HubSpot error categories used by the sandbox. */
export const HubSpotCategory = {
  validation: 'VALIDATION_ERROR',
  notFound: 'OBJECT_NOT_FOUND',
  invalidAuthentication: 'INVALID_AUTHENTICATION',
  missingScopes: 'MISSING_SCOPES',
  rateLimits: 'RATE_LIMITS',
} as const;
export type HubSpotCategory = (typeof HubSpotCategory)[keyof typeof HubSpotCategory];

/** Ticket pipeline stages of the default pipeline (`hs_pipeline_stage`). */
export const ticketStages = {
  '1': 'New',
  '2': 'Waiting on contact',
  '3': 'Waiting on us',
  '4': 'Closed',
} as const;
const priorities = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'];
const writableProperties = [
  'subject',
  'content',
  'hs_pipeline_stage',
  'hs_ticket_priority',
  'hubspot_owner_id',
  crmEffectProperty,
];

/** A HubSpot error body; `correlationId` is added per request by `finalize`. */
export function hubspotError(
  status: number,
  category: HubSpotCategory | string,
  message: string,
  headers?: Record<string, string>,
): ProviderResponse {
  return {
    status,
    body: { status: 'error', message, category },
    ...(headers === undefined ? {} : { headers }),
  };
}

const crmErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) =>
    hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to route ${method} request: ${pathname}`),
  auth: (failure) =>
    failure === 'forbidden'
      ? hubspotError(
          403,
          HubSpotCategory.missingScopes,
          "This app hasn't been granted all required scopes to make this call.",
        )
      : hubspotError(
          401,
          HubSpotCategory.invalidAuthentication,
          failure === 'missing'
            ? 'Authentication credentials not found. This API supports OAuth 2.0 authentication.'
            : 'The access token provided is not valid.',
        ),
  reservedHeader: (header) =>
    hubspotError(
      400,
      HubSpotCategory.validation,
      `The header ${header} is reserved by the Sideguard sandbox.`,
    ),
  payloadTooLarge: (limitBytes) =>
    hubspotError(413, HubSpotCategory.validation, `Request body exceeds ${limitBytes} bytes.`),
  rateLimited: (retryAfterSeconds) =>
    hubspotError(429, HubSpotCategory.rateLimits, 'You have reached your secondly limit.', {
      'Retry-After': String(retryAfterSeconds),
    }),
  internal: (status) => hubspotError(status, 'INTERNAL_ERROR', 'internal error'),
  badRequest: (message) => hubspotError(400, HubSpotCategory.validation, message),
};

function ticketNotFound(id: string): ProviderResponse {
  return hubspotError(404, HubSpotCategory.notFound, `resource not found: ticket ${id}`);
}

/** The HubSpot wire object for a stored ticket, optionally limited to some properties. */
function ticketObject(ticket: JsonRecord, only: readonly string[] | undefined): JsonRecord {
  const properties = isJsonObject(ticket.properties) ? ticket.properties : {};
  const selected =
    only === undefined
      ? properties
      : Object.fromEntries(
          only.map((name) => [
            name,
            Object.hasOwn(properties, name) ? (properties[name] ?? null) : null,
          ]),
        );
  return { ...ticket, properties: { ...selected, hs_object_id: String(ticket.id) } };
}

const retrieveTicket = defineOperation<{
  readonly id: string;
  readonly properties: readonly string[] | undefined;
}>({
  name: 'retrieve_ticket',
  method: 'GET',
  path: '/crm/v3/objects/tickets/:id',
  kind: 'read',
  parse(request) {
    let properties: string[] | undefined;
    for (const [name, value] of request.query) {
      if (name === 'properties')
        properties = [
          ...(properties ?? []),
          ...value.split(',').filter((entry) => entry.length > 0),
        ];
      else if (name !== 'archived')
        return {
          kind: 'invalid',
          response: hubspotError(
            400,
            HubSpotCategory.validation,
            `Unknown query parameter: ${name}`,
          ),
        };
    }
    return { kind: 'valid', input: { id: request.params.id ?? '', properties }, effectKey: null };
  },
  execute(input, context) {
    const ticket = isSafeId(input.id) ? context.get(provider, 'tickets', input.id) : undefined;
    return {
      response:
        ticket === undefined
          ? ticketNotFound(input.id)
          : { status: 200, body: ticketObject(ticket, input.properties) },
    };
  },
});

const updateTicket = defineOperation<{
  readonly id: string;
  readonly properties: Readonly<Record<string, string>>;
}>({
  name: 'update_ticket',
  method: 'PATCH',
  path: '/crm/v3/objects/tickets/:id',
  kind: 'write',
  parse(request) {
    if (request.query.length > 0) {
      return {
        kind: 'invalid',
        response: hubspotError(
          400,
          HubSpotCategory.validation,
          `Unknown query parameter: ${request.query[0]?.[0] ?? ''}`,
        ),
      };
    }
    const body = parseJsonBody(request.contentType, request.body);
    if (body.kind === 'wrong_content_type') {
      return {
        kind: 'invalid',
        response: hubspotError(
          415,
          HubSpotCategory.validation,
          `Unsupported Media Type: ${body.contentType || '(none)'}; use application/json`,
        ),
      };
    }
    if (body.kind === 'malformed')
      return {
        kind: 'invalid',
        response: hubspotError(
          400,
          HubSpotCategory.validation,
          `Invalid input JSON: ${body.message}`,
        ),
      };
    if (!isJsonObject(body.value) || !isJsonObject(body.value.properties)) {
      return {
        kind: 'invalid',
        response: hubspotError(
          400,
          HubSpotCategory.validation,
          'Invalid input JSON: expected an object with "properties"',
        ),
      };
    }
    const extra = unknownKeys(body.value, ['properties']);
    if (extra.length > 0)
      return {
        kind: 'invalid',
        response: hubspotError(400, HubSpotCategory.validation, `Unrecognized field "${extra[0]}"`),
      };
    const properties: Record<string, string> = {};
    for (const [name, value] of Object.entries(body.value.properties)) {
      if (!writableProperties.includes(name)) {
        return {
          kind: 'invalid',
          response: hubspotError(
            400,
            HubSpotCategory.validation,
            `Property "${name}" does not exist`,
          ),
        };
      }
      if (typeof value !== 'string' || value.length > 10_000) {
        return {
          kind: 'invalid',
          response: hubspotError(
            400,
            HubSpotCategory.validation,
            `Property values were not valid: ${name} must be a string`,
          ),
        };
      }
      if (name === 'hs_pipeline_stage' && !(value in ticketStages)) {
        return {
          kind: 'invalid',
          response: hubspotError(
            400,
            HubSpotCategory.validation,
            `Property values were not valid: ${value} is not a valid pipeline stage`,
          ),
        };
      }
      if (name === 'hs_ticket_priority' && !priorities.includes(value)) {
        return {
          kind: 'invalid',
          response: hubspotError(
            400,
            HubSpotCategory.validation,
            `Property values were not valid: ${value} is not a valid priority`,
          ),
        };
      }
      properties[name] = value;
    }
    if (Object.keys(properties).length === 0) {
      return {
        kind: 'invalid',
        response: hubspotError(400, HubSpotCategory.validation, 'No properties to update'),
      };
    }
    return {
      kind: 'valid',
      input: { id: request.params.id ?? '', properties },
      effectKey: properties[crmEffectProperty] ?? null,
    };
  },
  execute(input, context) {
    const ticket = isSafeId(input.id) ? context.get(provider, 'tickets', input.id) : undefined;
    if (ticket === undefined) return { response: ticketNotFound(input.id) };
    const now = new Date(context.nowMs()).toISOString();
    const previous = isJsonObject(ticket.properties) ? ticket.properties : {};
    const updated: JsonRecord = {
      ...ticket,
      properties: { ...previous, ...input.properties, hs_lastmodifieddate: now },
      updatedAt: now,
    };
    return {
      response: { status: 200, body: ticketObject(updated, undefined) },
      write: {
        changes: [{ provider, collection: 'tickets', id: input.id, value: updated }],
        receipt: {
          objectId: input.id,
          details: { properties: Object.keys(input.properties).sort() },
        },
      },
    };
  },
});

function seedTickets(seed: number): Record<string, JsonRecord[]> {
  const catalogue = buildSeedCatalogue(seed);
  const random = createSeededRandom(seed ^ 0x7e1c);
  const subjects = [
    'Refund request',
    'Item arrived damaged',
    'Wrong size delivered',
    'Charged twice',
    'Where is my order?',
  ];
  const tickets = catalogue.orders.slice(0, 5).map((order, index): JsonRecord => {
    const created = new Date((seedEpochSeconds + (index + 2) * 86_400) * 1000).toISOString();
    const subject = pick(random, subjects);
    return {
      id: String(5001 + index),
      properties: {
        subject: `${subject} for order ${order.id}`,
        content: `Customer ${order.customerId} wrote about order ${order.id}.`,
        hs_pipeline: '0',
        hs_pipeline_stage: String(1 + Math.floor(random() * 3)),
        hs_ticket_priority: pick(random, priorities),
        order_id: order.id,
        createdate: created,
        hs_lastmodifieddate: created,
      },
      createdAt: created,
      updatedAt: created,
      archived: false,
    };
  });
  return { tickets };
}

/** The HubSpot-shaped CRM provider. */
export const crmProvider: ProviderDefinition = {
  name: provider,
  pathPrefix: '/crm/',
  operations: [retrieveTicket, updateTicket],
  roles: {
    tickets_writer: ['retrieve_ticket', 'update_ticket'],
    tickets_reader: ['retrieve_ticket'],
  },
  defaultKeys: [
    {
      key: 'pat-sandbox-sideguard-agent',
      role: 'tickets_writer',
      description: 'private app token: read and update tickets',
    },
    {
      key: 'pat-sandbox-sideguard-readonly',
      role: 'tickets_reader',
      description: 'private app token: read tickets',
    },
  ],
  credential: (headers) => bearerToken(headers),
  errors: crmErrors,
  requestIdHeader: 'X-HubSpot-Correlation-Id',
  requestId: (token) => token,
  finalize(response, requestId) {
    if (response.status < 400 || !isJsonObject(response.body)) return response;
    return { ...response, body: { ...response.body, correlationId: requestId } };
  },
  effectOf: (collection, record) =>
    collection === 'tickets' ? stringMember(record.properties, crmEffectProperty) : null,
  seed: (seed) => seedTickets(seed),
};

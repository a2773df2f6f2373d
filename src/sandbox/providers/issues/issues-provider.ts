/**
 * The Jira-shaped issues provider: read and edit issues, list and perform transitions, with
 * Jira's error shape. Effect convention: the guard sets the field `sideguard_effect` to its
 * effect key in `fields` of the PUT or of the transition.
 */
import {
  basicCredentials,
  bearerToken,
  isJsonObject,
  isSafeId,
  parseJsonBody,
  stringMember,
  unknownKeys,
} from '../../provider-kit.js';
import {
  defineOperation,
  type ExecuteContext,
  type JsonRecord,
  type JsonValue,
  type ParseResult,
  type ProviderDefinition,
  type ProviderErrorShapes,
  type ProviderRequest,
  type ProviderResponse,
} from '../../sandbox-types.js';
import { buildSeedCatalogue, seedEpochSeconds } from '../../seed-catalogue.js';
import { createSeededRandom, pick } from '../../seeded-random.js';

const provider = 'issues';

/** Issue field that carries the guard's semantic effect key. */
export const issuesEffectField = 'sideguard_effect';

/** Workflow statuses and the transitions into them (any status can move to any other). */
export const issueStatuses = [
  { id: '10000', name: 'To Do', transitionId: '11' },
  { id: '3', name: 'In Progress', transitionId: '21' },
  { id: '10001', name: 'Done', transitionId: '31' },
] as const;

const editableFields = ['summary', 'description', 'labels', 'priority', issuesEffectField];
const priorityNames = ['Lowest', 'Low', 'Medium', 'High', 'Highest'];

/** A Jira error body. */
export function jiraError(
  status: number,
  errorMessages: readonly string[],
  errors: Readonly<Record<string, string>> = {},
  headers?: Record<string, string>,
): ProviderResponse {
  return {
    status,
    body: { errorMessages: [...errorMessages], errors: { ...errors } },
    ...(headers === undefined ? {} : { headers }),
  };
}

const issuesErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) => jiraError(404, [`No ${method} resource at ${pathname}`]),
  auth: (failure) =>
    failure === 'forbidden'
      ? jiraError(403, ['You do not have permission to perform this operation.'])
      : jiraError(
          401,
          [
            failure === 'missing'
              ? 'You are not authenticated. Authentication required to perform this operation.'
              : 'Client must be authenticated to access this resource.',
          ],
          {},
          {
            'WWW-Authenticate': 'Basic realm="protected-area"',
          },
        ),
  reservedHeader: (header) =>
    jiraError(400, [`The header ${header} is reserved by the Sideguard sandbox.`]),
  payloadTooLarge: (limitBytes) => jiraError(413, [`Request body exceeds ${limitBytes} bytes.`]),
  rateLimited: (retryAfterSeconds) =>
    jiraError(429, ['Rate limit exceeded.'], {}, { 'Retry-After': String(retryAfterSeconds) }),
  internal: (status) => jiraError(status, ['Internal server error']),
  badRequest: (message) => jiraError(400, [message]),
};

function issueNotFound(): ProviderResponse {
  return jiraError(404, ['Issue does not exist or you do not have permission to see it.']);
}

/** Finds an issue by id (`10001`) or key (`SUP-1`). */
function findIssue(
  context: Pick<ExecuteContext, 'get' | 'list'>,
  idOrKey: string,
): JsonRecord | undefined {
  if (!isSafeId(idOrKey)) return undefined;
  return (
    context.get(provider, 'issues', idOrKey) ??
    context.list(provider, 'issues').find((issue) => issue.key === idOrKey)
  );
}

type JsonObject = { readonly [key: string]: JsonValue };

/** Parses a JSON body that must be an object with only `allowed` keys. */
function jsonObjectBody(
  request: ProviderRequest,
  allowed: readonly string[],
): { ok: true; value: JsonObject } | { ok: false; response: ProviderResponse } {
  if (request.query.length > 0)
    return {
      ok: false,
      response: jiraError(400, [`Unknown query parameter: ${request.query[0]?.[0] ?? ''}`]),
    };
  const body = parseJsonBody(request.contentType, request.body);
  if (body.kind === 'wrong_content_type')
    return {
      ok: false,
      response: jiraError(415, [
        `Unsupported media type ${body.contentType || '(none)'}; use application/json.`,
      ]),
    };
  if (body.kind === 'malformed')
    return {
      ok: false,
      response: jiraError(400, [`Unexpected character in the request body: ${body.message}`]),
    };
  if (!isJsonObject(body.value))
    return { ok: false, response: jiraError(400, ['The request body must be a JSON object.']) };
  const extra = unknownKeys(body.value, allowed);
  if (extra.length > 0)
    return { ok: false, response: jiraError(400, [`Unrecognized field "${extra[0]}".`]) };
  return { ok: true, value: body.value };
}

/** Validates `fields` of an edit or a transition; returns the new field values. */
function editedFields(
  fields: JsonValue | undefined,
): { ok: true; value: Record<string, JsonValue> } | { ok: false; response: ProviderResponse } {
  if (fields === undefined) return { ok: true, value: {} };
  if (!isJsonObject(fields))
    return { ok: false, response: jiraError(400, ['"fields" must be an object.']) };
  // Maps, not object literals: field names are caller data and may be "__proto__".
  const errors = new Map<string, string>();
  const value = new Map<string, JsonValue>();
  for (const [name, entry] of Object.entries(fields)) {
    if (!editableFields.includes(name)) {
      errors.set(
        name,
        `Field '${name}' cannot be set. It is not on the appropriate screen, or unknown.`,
      );
    } else if (name === 'labels') {
      if (
        !Array.isArray(entry) ||
        !entry.every((label) => typeof label === 'string' && /^\S{1,255}$/.test(label))
      )
        errors.set(name, 'Labels must be strings without spaces.');
      else value.set(name, entry);
    } else if (name === 'priority') {
      if (
        !isJsonObject(entry) ||
        typeof entry.name !== 'string' ||
        !priorityNames.includes(entry.name)
      )
        errors.set(name, 'Specify a valid priority name.');
      else value.set(name, { name: entry.name });
    } else if (
      typeof entry !== 'string' ||
      entry.length > 32_767 ||
      (name === 'summary' && entry.trim().length === 0)
    ) {
      errors.set(
        name,
        name === 'summary'
          ? 'You must specify a summary of the issue.'
          : `Field '${name}' must be a string.`,
      );
    } else {
      value.set(name, entry);
    }
  }
  if (errors.size > 0)
    return { ok: false, response: jiraError(400, [], Object.fromEntries(errors)) };
  return { ok: true, value: Object.fromEntries(value) };
}

function issueObject(issue: JsonRecord, origin: string): JsonRecord {
  return { ...issue, self: `${origin}/rest/api/3/issue/${String(issue.id)}` };
}

function fieldsOf(issue: JsonRecord): JsonObject {
  return isJsonObject(issue.fields) ? issue.fields : {};
}

const retrieveIssue = defineOperation<{ readonly idOrKey: string }>({
  name: 'retrieve_issue',
  method: 'GET',
  path: '/rest/api/3/issue/:idOrKey',
  kind: 'read',
  parse(request): ParseResult<{ readonly idOrKey: string }> {
    for (const [name] of request.query) {
      if (name !== 'fields' && name !== 'expand')
        return { kind: 'invalid', response: jiraError(400, [`Unknown query parameter: ${name}`]) };
    }
    return { kind: 'valid', input: { idOrKey: request.params.idOrKey ?? '' }, effectKey: null };
  },
  execute(input, context, request) {
    const issue = findIssue(context, input.idOrKey);
    return {
      response:
        issue === undefined
          ? issueNotFound()
          : { status: 200, body: issueObject(issue, request.origin) },
    };
  },
});

const updateIssue = defineOperation<{
  readonly idOrKey: string;
  readonly fields: Readonly<Record<string, JsonValue>>;
}>({
  name: 'update_issue',
  method: 'PUT',
  path: '/rest/api/3/issue/:idOrKey',
  kind: 'write',
  parse(request) {
    const body = jsonObjectBody(request, ['fields']);
    if (!body.ok) return { kind: 'invalid', response: body.response };
    const fields = editedFields(body.value.fields);
    if (!fields.ok) return { kind: 'invalid', response: fields.response };
    if (Object.keys(fields.value).length === 0)
      return { kind: 'invalid', response: jiraError(400, ['No fields to update.']) };
    const effect = fields.value[issuesEffectField];
    return {
      kind: 'valid',
      input: { idOrKey: request.params.idOrKey ?? '', fields: fields.value },
      effectKey: typeof effect === 'string' ? effect : null,
    };
  },
  execute(input, context) {
    const issue = findIssue(context, input.idOrKey);
    if (issue === undefined) return { response: issueNotFound() };
    const now = new Date(context.nowMs()).toISOString();
    const updated: JsonRecord = {
      ...issue,
      fields: { ...fieldsOf(issue), ...input.fields, updated: now },
    };
    const id = String(issue.id);
    return {
      response: { status: 204 },
      write: {
        changes: [{ provider, collection: 'issues', id, value: updated }],
        receipt: {
          objectId: id,
          details: { key: issue.key ?? null, fields: Object.keys(input.fields).sort() },
        },
      },
    };
  },
});

const listTransitions = defineOperation<{ readonly idOrKey: string }>({
  name: 'list_transitions',
  method: 'GET',
  path: '/rest/api/3/issue/:idOrKey/transitions',
  kind: 'read',
  parse(request) {
    if (request.query.length > 0)
      return {
        kind: 'invalid',
        response: jiraError(400, [`Unknown query parameter: ${request.query[0]?.[0] ?? ''}`]),
      };
    return { kind: 'valid', input: { idOrKey: request.params.idOrKey ?? '' }, effectKey: null };
  },
  execute(input, context) {
    const issue = findIssue(context, input.idOrKey);
    if (issue === undefined) return { response: issueNotFound() };
    return { response: { status: 200, body: { transitions: availableTransitions(issue) } } };
  },
});

function currentStatusId(issue: JsonRecord): string {
  const fields = fieldsOf(issue);
  const status = isJsonObject(fields.status) ? fields.status : {};
  return typeof status.id === 'string' ? status.id : '';
}

function availableTransitions(issue: JsonRecord): JsonRecord[] {
  const current = currentStatusId(issue);
  return issueStatuses
    .filter((status) => status.id !== current)
    .map((status) => ({
      id: status.transitionId,
      name: status.name,
      to: { id: status.id, name: status.name },
    }));
}

const transitionIssue = defineOperation<{
  readonly idOrKey: string;
  readonly transitionId: string;
  readonly fields: Readonly<Record<string, JsonValue>>;
}>({
  name: 'transition_issue',
  method: 'POST',
  path: '/rest/api/3/issue/:idOrKey/transitions',
  kind: 'write',
  parse(request) {
    const body = jsonObjectBody(request, ['transition', 'fields']);
    if (!body.ok) return { kind: 'invalid', response: body.response };
    const transition = body.value.transition;
    if (
      !isJsonObject(transition) ||
      typeof transition.id !== 'string' ||
      unknownKeys(transition, ['id']).length > 0
    ) {
      return {
        kind: 'invalid',
        response: jiraError(400, [
          'Missing \'transition\' identifier: send { "transition": { "id": "…" } }.',
        ]),
      };
    }
    const fields = editedFields(body.value.fields);
    if (!fields.ok) return { kind: 'invalid', response: fields.response };
    const effect = fields.value[issuesEffectField];
    return {
      kind: 'valid',
      input: {
        idOrKey: request.params.idOrKey ?? '',
        transitionId: transition.id,
        fields: fields.value,
      },
      effectKey: typeof effect === 'string' ? effect : null,
    };
  },
  execute(input, context) {
    const issue = findIssue(context, input.idOrKey);
    if (issue === undefined) return { response: issueNotFound() };
    const target = issueStatuses.find((status) => status.transitionId === input.transitionId);
    if (target === undefined || target.id === currentStatusId(issue)) {
      return {
        response: jiraError(400, [
          `Transition id '${input.transitionId}' is not valid for this issue.`,
        ]),
      };
    }
    const now = new Date(context.nowMs()).toISOString();
    const updated: JsonRecord = {
      ...issue,
      fields: {
        ...fieldsOf(issue),
        ...input.fields,
        status: { id: target.id, name: target.name },
        updated: now,
      },
    };
    const id = String(issue.id);
    return {
      response: { status: 204 },
      write: {
        changes: [{ provider, collection: 'issues', id, value: updated }],
        receipt: {
          objectId: id,
          details: { key: issue.key ?? null, transition: input.transitionId, status: target.name },
        },
      },
    };
  },
});

function seedIssues(seed: number): Record<string, JsonRecord[]> {
  const catalogue = buildSeedCatalogue(seed);
  const random = createSeededRandom(seed ^ 0x1551);
  const summaries = [
    'Investigate duplicate refund',
    'Customer escalation',
    'Payment dispute follow-up',
    'Shipping delay',
    'Refund approval needed',
  ];
  const issues = catalogue.orders.slice(0, 5).map((order, index): JsonRecord => {
    const created = new Date((seedEpochSeconds + (index + 3) * 86_400) * 1000).toISOString();
    const status = issueStatuses[index % 2] ?? issueStatuses[0];
    return {
      id: String(10001 + index),
      key: `SUP-${index + 1}`,
      fields: {
        summary: `${pick(random, summaries)} (${order.id})`,
        description: `Escalated from support for order ${order.id}.`,
        status: { id: status.id, name: status.name },
        priority: { name: pick(random, priorityNames) },
        labels: ['support'],
        created,
        updated: created,
      },
    };
  });
  return { issues };
}

/** The Jira-shaped issues provider. */
export const issuesProvider: ProviderDefinition = {
  name: provider,
  pathPrefix: '/rest/api/3/',
  operations: [retrieveIssue, updateIssue, listTransitions, transitionIssue],
  roles: {
    issues_writer: ['retrieve_issue', 'update_issue', 'list_transitions', 'transition_issue'],
    issues_reader: ['retrieve_issue', 'list_transitions'],
  },
  defaultKeys: [
    {
      key: 'jira-sideguard-agent',
      role: 'issues_writer',
      description: 'API token (Basic user:token or Bearer): edit and transition issues',
    },
    {
      key: 'jira-sideguard-readonly',
      role: 'issues_reader',
      description: 'API token: read issues',
    },
  ],
  // Jira Cloud takes `email:api_token` as Basic auth; a Bearer token is accepted too.
  credential: (headers) => basicCredentials(headers)?.password ?? bearerToken(headers),
  errors: issuesErrors,
  requestIdHeader: 'X-AREQUESTID',
  requestId: (token) => token,
  effectOf: (collection, record) =>
    collection === 'issues' ? stringMember(record.fields, issuesEffectField) : null,
  seed: (seed) => seedIssues(seed),
};

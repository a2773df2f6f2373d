/**
 * The retail provider's wire form: one path per benchmark tool, `/retail/v1/<tool>` — reads are
 * GET with the arguments as query parameters, writes POST a JSON object — and `{ result }` out. A benchmark error string is answered
 * 422 `{ error: { code: "retail_error", message: "Error: …" } }` and changes nothing.
 */
import { createHash } from 'node:crypto';
import { isJsonObject, parseJsonBody, unknownKeys } from '../../provider-kit.js';
import {
  defineOperation,
  type ExecuteContext,
  type ExecuteResult,
  type JsonRecord,
  type JsonValue,
  type OperationDefinition,
  type ParseResult,
  type ProviderResponse,
  type StateChange,
} from '../../sandbox-types.js';
import type { RetailReadResult } from './retail-reads.js';
import type { RetailOrder, RetailProduct, RetailUser, RetailView } from './retail-records.js';
import type { RetailWriteResult } from './retail-writes.js';

/** The provider's name and the collections it keeps. */
export const retailProviderName = 'retail';

/** A retail API error body: `{ error: { code, message } }`. */
export function retailError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): ProviderResponse {
  return {
    status,
    body: { error: { code, message } },
    ...(headers === undefined ? {} : { headers }),
  };
}

/** The type of each argument of a tool. */
export type RetailArgumentType = 'string' | 'string[]';

/** Arguments as parsed: strings and lists of strings. */
export type RetailArguments = Readonly<Record<string, string | readonly string[]>>;

/** Records are stored with an `id` (the sandbox's key); the benchmark's records have none. */
function withoutId<T>(record: JsonRecord | undefined): T | undefined {
  if (record === undefined) return undefined;
  const { id: _id, ...rest } = record;
  return rest as T;
}

/** The tools' view of sandbox state. */
export function retailView(context: Pick<ExecuteContext, 'get' | 'list'>): RetailView {
  const get = (collection: string, id: string) => context.get(retailProviderName, collection, id);
  return {
    user: (id) => withoutId<RetailUser>(get('users', id)),
    order: (id) => withoutId<RetailOrder>(get('orders', id)),
    product: (id) => withoutId<RetailProduct>(get('products', id)),
    users: () =>
      context
        .list(retailProviderName, 'users')
        .map((record) => [String(record.id), withoutId<RetailUser>(record) as RetailUser] as const),
    products: () =>
      context
        .list(retailProviderName, 'products')
        .map((record) => withoutId<RetailProduct>(record) as RetailProduct),
  };
}

/** The semantic effect the sandbox itself sees in a write: the tool and its exact arguments. */
export function retailEffectKey(tool: string, args: RetailArguments): string {
  const canonical = JSON.stringify(
    Object.keys(args)
      .sort()
      .map((key) => [key, args[key]]),
  );
  const digest = createHash('sha256').update(`${tool}\n${canonical}`).digest('hex').slice(0, 32);
  return `retail.${tool}:${digest}`;
}

/** Validates a tool's JSON arguments: exactly the declared names, each of its type. */
export function parseRetailArguments(
  tool: string,
  spec: Readonly<Record<string, RetailArgumentType>>,
  body: JsonValue,
): { kind: 'valid'; args: RetailArguments } | { kind: 'invalid'; message: string } {
  if (!isJsonObject(body)) return { kind: 'invalid', message: `${tool} takes a JSON object` };
  const unknown = unknownKeys(body, Object.keys(spec));
  if (unknown.length > 0) {
    return {
      kind: 'invalid',
      message: `Unknown argument of ${tool}: ${JSON.stringify(unknown[0])}`,
    };
  }
  const args: Record<string, string | readonly string[]> = {};
  for (const [name, type] of Object.entries(spec)) {
    const value = body[name];
    const valid =
      type === 'string'
        ? typeof value === 'string'
        : Array.isArray(value) && value.every((entry) => typeof entry === 'string');
    if (!valid) {
      return {
        kind: 'invalid',
        message: `Argument ${name} of ${tool} must be ${type === 'string' ? 'a string' : 'a list of strings'}`,
      };
    }
    args[name] = value as string | readonly string[];
  }
  return { kind: 'valid', args };
}

/** A read's arguments from the query string: each declared name once. */
function parseQueryArguments(
  tool: string,
  spec: Readonly<Record<string, RetailArgumentType>>,
  request: Parameters<OperationDefinition['parse']>[0],
): ParseResult<RetailArguments> {
  const values: Record<string, JsonValue> = {};
  for (const [name, value] of request.query) {
    if (Object.hasOwn(values, name)) {
      return {
        kind: 'invalid',
        response: retailError(400, 'invalid_arguments', `Argument ${name} of ${tool} is repeated`),
      };
    }
    values[name] = value;
  }
  const parsed = parseRetailArguments(tool, spec, values);
  return parsed.kind === 'invalid'
    ? { kind: 'invalid', response: retailError(400, 'invalid_arguments', parsed.message) }
    : { kind: 'valid', input: parsed.args, effectKey: null };
}

function parseTool(
  tool: string,
  spec: Readonly<Record<string, RetailArgumentType>>,
  request: Parameters<OperationDefinition['parse']>[0],
): ParseResult<RetailArguments> {
  const body =
    request.body.length === 0
      ? { kind: 'json' as const, value: {} }
      : parseJsonBody(request.contentType, request.body);
  if (body.kind === 'wrong_content_type') {
    return {
      kind: 'invalid',
      response: retailError(
        415,
        'unsupported_media_type',
        'Send the arguments as application/json',
      ),
    };
  }
  if (body.kind === 'malformed') {
    return { kind: 'invalid', response: retailError(400, 'invalid_json', body.message) };
  }
  const parsed = parseRetailArguments(tool, spec, body.value);
  if (parsed.kind === 'invalid') {
    return { kind: 'invalid', response: retailError(400, 'invalid_arguments', parsed.message) };
  }
  return {
    kind: 'valid',
    input: parsed.args,
    effectKey: retailEffectKey(tool, parsed.args),
  };
}

/** A benchmark error string as the wire answer. */
function toolError(message: string): ProviderResponse {
  return retailError(422, 'retail_error', message);
}

/** A read tool as an operation: `GET /retail/v1/<tool>?name=value…`. */
export function readOperation(
  tool: string,
  spec: Readonly<Record<string, RetailArgumentType>>,
  run: (view: RetailView, args: never) => RetailReadResult,
): OperationDefinition {
  return defineOperation<RetailArguments>({
    name: tool,
    method: 'GET',
    path: `/retail/v1/${tool}`,
    kind: 'read',
    parse: (request) => parseQueryArguments(tool, spec, request),
    execute(input, context): ExecuteResult {
      const answer = run(retailView(context), input as never);
      return answer.kind === 'error'
        ? { response: toolError(answer.message) }
        : { response: { status: 200, body: { result: answer.result as unknown as JsonValue } } };
    },
  });
}

/** A write tool as an operation: the changed records commit with one receipt. */
export function writeOperation(
  tool: string,
  spec: Readonly<Record<string, RetailArgumentType>>,
  run: (view: RetailView, args: never) => RetailWriteResult,
): OperationDefinition {
  return defineOperation<RetailArguments>({
    name: tool,
    method: 'POST',
    path: `/retail/v1/${tool}`,
    kind: 'write',
    parse: (request) => parseTool(tool, spec, request),
    execute(input, context): ExecuteResult {
      const answer = run(retailView(context), input as never);
      if (answer.kind === 'error') return { response: toolError(answer.message) };
      const changes: StateChange[] = [];
      if (answer.order !== undefined) {
        changes.push(change('orders', answer.order.order_id, answer.order));
      }
      if (answer.user !== undefined) {
        const userId = answer.order?.user_id ?? String(input.user_id ?? '');
        changes.push(change('users', userId, answer.user));
      }
      const objectId = answer.order?.order_id ?? String(input.user_id ?? '');
      return {
        response: { status: 200, body: { result: answer.result as unknown as JsonValue } },
        write: {
          changes,
          receipt: {
            objectId,
            details: {
              tool,
              ...(answer.order === undefined ? {} : { status: answer.order.status }),
            },
          },
        },
      };
    },
  });
}

function change(collection: string, id: string, value: RetailOrder | RetailUser): StateChange {
  return {
    provider: retailProviderName,
    collection,
    id,
    value: { id, ...(value as unknown as JsonRecord) },
  };
}

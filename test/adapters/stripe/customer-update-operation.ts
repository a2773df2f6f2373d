/**
 * The sandbox's Stripe-shaped payments provider plus `POST /v1/customers/:id` (Stripe's customer
 * update: form-encoded, metadata merged key by key, an empty value unsets a key). The built-in
 * provider has no customer update yet; this adds one through the sandbox's public provider API,
 * so the update runs inside the real sandbox: file-backed state, idempotency keys (honoured or
 * ignored), faults at the commit point, write counts and receipts.
 */
import {
  defineOperation,
  type JsonRecord,
  type ProviderDefinition,
  type ProviderResponse,
  paymentsProvider,
} from 'sideguard/sandbox';

const EDITABLE = ['name', 'email', 'description', 'phone'] as const;

interface CustomerUpdateInput {
  readonly id: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly metadata: Readonly<Record<string, string>>;
}

function invalid(message: string, code: string, param?: string): ProviderResponse {
  return {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code,
        message,
        ...(param === undefined ? {} : { param }),
      },
    },
  };
}

const updateCustomer = defineOperation<CustomerUpdateInput>({
  name: 'update_customer',
  method: 'POST',
  path: '/v1/customers/:id',
  kind: 'write',
  parse(request) {
    if (request.contentType !== 'application/x-www-form-urlencoded' && request.body.length > 0) {
      return {
        kind: 'invalid',
        response: invalid('Unsupported Content-Type', 'parameter_invalid'),
      };
    }
    const fields: Record<string, string> = {};
    const metadata: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(request.body.toString('utf8'))) {
      const key = /^metadata\[([^\]]{1,40})\]$/.exec(name)?.[1];
      if (key !== undefined) metadata[key] = value;
      else if ((EDITABLE as readonly string[]).includes(name)) fields[name] = value;
      else {
        return {
          kind: 'invalid',
          response: invalid(`Received unknown parameter: ${name}`, 'parameter_unknown', name),
        };
      }
    }
    return {
      kind: 'valid',
      input: { id: request.params.id ?? '', fields, metadata },
      effectKey: metadata.sideguard_effect ?? null,
    };
  },
  execute(input, context) {
    const customer = context.get('payments', 'customers', input.id);
    if (customer === undefined) {
      return {
        response: {
          status: 404,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'resource_missing',
              message: `No such customer: '${input.id}'`,
              param: 'id',
            },
          },
        },
      };
    }
    const merged: Record<string, string> = {
      ...(customer.metadata as Record<string, string> | undefined),
    };
    for (const [key, value] of Object.entries(input.metadata)) {
      if (value === '') delete merged[key];
      else merged[key] = value;
    }
    const updated: JsonRecord = { ...customer, ...input.fields, metadata: merged };
    return {
      response: { status: 200, body: updated },
      write: {
        changes: [{ provider: 'payments', collection: 'customers', id: input.id, value: updated }],
        receipt: { objectId: input.id, details: { operation: 'update_customer' } },
      },
    };
  },
});

const writerRole = 'refunds_writer';

/** The payments provider with `update_customer` added (and allowed to the writer key). */
export const paymentsWithCustomerUpdates: ProviderDefinition = {
  ...paymentsProvider,
  operations: [...paymentsProvider.operations, updateCustomer],
  roles: {
    ...paymentsProvider.roles,
    [writerRole]: [...(paymentsProvider.roles[writerRole] ?? []), 'update_customer'],
  },
};

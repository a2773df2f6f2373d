/**
 * The provider model: an in-process provider (payments refunds, CRM tickets, orders, or a
 * user's own collections) whose every call is a scheduling point. A write is split into *apply*
 * (the commit point, observed) and *respond*, so it can land without its answer, land late after
 * the caller's timeout, or be re-sent by a client's hidden transport retry. Faults come from the
 * tape; the model keeps the provider's own truth (every write, every request) as evidence.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { ProviderReply } from '../verify/provider-client.js';
import type { ChoiceTape } from './choice-tape.js';
import type { Phase, ReadFault, WriteFault } from './explore-vocabulary.js';
import type { Actor, Scheduler } from './scheduler.js';
import type { VirtualClock } from './virtual-clock.js';

/**
 * What one provider call produced: the HTTP client's reply shape, or `not_sent` when the caller's
 * signal had aborted before the request left (nothing was dispatched, so nothing can land).
 */
export type ModelReply = ProviderReply | { readonly kind: 'not_sent'; readonly reason: 'aborted' };

/** How a write's caller limits it: the guard's lease signal (a kit's `fetch` gets it). */
export interface WriteLimits {
  /** Once aborted, the request is not sent (the kit's `fetch` throws before dispatch). */
  readonly signal?: AbortSignal;
}

/** A stored provider object (a refund, a ticket, an order…). */
export interface ModelObject {
  readonly id: string;
  readonly collection: string;
  fields: Record<string, JsonValue>;
  /** The semantic effect the write carried in its metadata, if any. */
  readonly effect: string | null;
  readonly proposal: string | null;
}

/** A write request as an executor sends it. */
export interface WriteRequest {
  /** e.g. `create_refund`, `update_ticket`. */
  readonly operation: string;
  /** `create` makes a new object (a second one is a second effect); `set` overwrites fields. */
  readonly kind: 'create' | 'set';
  readonly collection: string;
  /** For `set`: the object to change. */
  readonly objectId?: string;
  readonly idempotencyKey?: string;
  /** Metadata: the semantic effect and proposal the write belongs to. */
  readonly effect?: string;
  readonly proposal?: string;
  readonly fields: Readonly<Record<string, JsonValue>>;
}

/** A read request: list a collection (optionally filtered) or get one object. */
export interface ReadRequest {
  readonly operation: string;
  readonly collection: string;
  readonly objectId?: string;
  readonly where?: (object: ModelObject) => boolean;
}

/** One write that really happened at the provider (the provider's own truth). */
export interface AppliedWrite {
  readonly sequence: number;
  readonly requestId: number;
  readonly operation: string;
  readonly kind: 'create' | 'set';
  readonly objectId: string;
  readonly effect: string | null;
  readonly proposal: string | null;
  readonly idempotencyKey: string | null;
  readonly fields: Readonly<Record<string, JsonValue>>;
  readonly atMs: number;
  readonly step: number;
}

/** One write request as the provider saw it. */
export interface RequestRecord {
  readonly id: number;
  readonly operation: string;
  readonly idempotencyKey: string | null;
  readonly effect: string | null;
  readonly proposal: string | null;
  readonly fault: WriteFault;
  readonly sentAtMs: number;
  readonly sentStep: number;
  readonly sender: {
    readonly process: string;
    readonly incarnation: number;
    readonly actor: string;
  };
  /** How many times the transport delivered it to the provider. */
  deliveries: number;
  outcome: 'pending' | 'applied' | 'replayed' | 'refused' | 'not_applied' | 'died';
}

/** How many times the provider saw a request (a refusal before the write counts once). */
export function deliveriesSeen(request: RequestRecord): number {
  if (request.deliveries > 0) return request.deliveries;
  return request.outcome === 'not_applied' && request.fault !== 'lost_before_write' ? 1 : 0;
}

/** How the executor's HTTP client behaves. */
export type Transport =
  /** Owns the transport: one attempt, no retries (the executor kit). */
  | 'kit'
  /** An official client that re-sends a reset connection on its own (even with retries off). */
  | 'retrying';

/** Settings of one provider model. */
export interface ProviderModelConfig {
  /** Whether a repeated idempotency key replays the first answer (Stripe) or writes again. */
  readonly honoursKeys: boolean;
  /** How long a client waits for an answer. @default 800 */
  readonly clientTimeoutMs?: number;
  /**
   * After this long a request that has not landed never will. It must not exceed the settling
   * window the actions declare (what `verificationDelayMs` promises about the provider).
   * @default 2_000
   */
  readonly maxInFlightMs?: number;
}

/** What the model needs from the schedule. */
export interface ProviderModelContext {
  readonly scheduler: Scheduler;
  readonly clock: VirtualClock;
  readonly tape: ChoiceTape;
  /** False in the liveness phase: faults are healed. */
  readonly faultsEnabled: () => boolean;
  /** Coverage: a fault hit an actor in a phase. */
  readonly onFault: (fault: string, phase: Phase, actor: Actor | undefined) => void;
  /** Fault triggers to leave out (`odd_receipt` here; see `open-findings.ts`). */
  readonly avoid: ReadonlySet<string>;
}

/** Weights of write faults, in {@link WriteFault} order (none first). */
const WRITE_FAULTS: readonly WriteFault[] = [
  'none',
  'error_before_write',
  'rejected',
  'rate_limited',
  'lost_before_write',
  'lost_after_write',
  'error_after_write',
  'late_write',
  'transport_retry',
  'odd_text',
];
const WRITE_FAULT_WEIGHTS = [70, 3, 3, 2, 3, 5, 3, 6, 3, 2];
const READ_FAULTS: readonly ReadFault[] = ['none', 'read_error', 'read_timeout'];
const READ_FAULT_WEIGHTS = [88, 7, 5];

/** A shared empty header set (replies carry no headers in the model). */
const NO_HEADERS = new Headers();

/**
 * An error code whose text puts a non-BMP character across the 80th UTF-16 unit of
 * `http_402_<code>`, where hosts commonly cut reasons.
 */
export const ODD_ERROR_CODE = `card_declined_${'x'.repeat(56)}\u{1F4B3}_issuer`;
/** A receipt id carrying a lone surrogate, as a JSON body can (`"re_…\ud83d"`). */
const oddId = (id: string): string => `${id}\ud83d`;

const respond = (status: number, body: unknown): ProviderReply => ({
  kind: 'response',
  status,
  body,
  headers: NO_HEADERS,
});
const TIMEOUT: ProviderReply = { kind: 'no_response', reason: 'timeout' };
const RESET: ProviderReply = { kind: 'no_response', reason: 'connection_lost' };
const NOT_SENT: ModelReply = { kind: 'not_sent', reason: 'aborted' };

/** The provider's state and its client. */
export class ProviderModel {
  /** Every object by `collection/id`, in creation order. */
  readonly objects = new Map<string, ModelObject>();
  readonly writes: AppliedWrite[] = [];
  readonly requests: RequestRecord[] = [];
  /** The same objects by collection, then id (same order): lookups build no `collection/id` key. */
  readonly #byCollection = new Map<string, Map<string, ModelObject>>();
  /** The first answer per idempotency key, with the request it answered (to compare a replay). */
  readonly #answers = new Map<
    string,
    { readonly request: WriteRequest; readonly reply: ProviderReply }
  >();
  readonly #context: ProviderModelContext;
  readonly #config: Required<ProviderModelConfig>;
  #ids = 0;
  #sequence = 0;

  constructor(context: ProviderModelContext, config: ProviderModelConfig) {
    this.#context = context;
    this.#config = {
      honoursKeys: config.honoursKeys,
      clientTimeoutMs: config.clientTimeoutMs ?? 800,
      maxInFlightMs: config.maxInFlightMs ?? 2_000,
    };
  }

  get honoursKeys(): boolean {
    return this.#config.honoursKeys;
  }

  /** Seeds an object (not a write: the provider's initial state). */
  seed(collection: string, id: string, fields: Record<string, JsonValue>): void {
    this.#store({ id, collection, fields: { ...fields }, effect: null, proposal: null });
  }

  /** Objects of a collection, in creation order. */
  list(collection: string): ModelObject[] {
    const objects = this.#byCollection.get(collection);
    return objects === undefined ? [] : [...objects.values()];
  }

  #find(collection: string, id: string): ModelObject | undefined {
    return this.#byCollection.get(collection)?.get(id);
  }

  #store(object: ModelObject): void {
    this.objects.set(`${object.collection}/${object.id}`, object);
    let objects = this.#byCollection.get(object.collection);
    if (objects === undefined) {
      objects = new Map();
      this.#byCollection.set(object.collection, objects);
    }
    objects.set(object.id, object);
  }

  #remove(object: ModelObject): void {
    this.objects.delete(`${object.collection}/${object.id}`);
    this.#byCollection.get(object.collection)?.delete(object.id);
  }

  /**
   * Sends a write through `transport`; resolves with what the client saw. The caller first parks
   * at the dispatch point (time may pass before the request leaves, as in a GC pause); if its
   * signal aborted meanwhile, nothing is sent (`not_sent`), as a `fetch` given the signal does.
   */
  write(request: WriteRequest, transport: Transport, limits?: WriteLimits): Promise<ModelReply> {
    return this.#context.scheduler
      .point(`dispatch ${request.operation}`, 'provider_write')
      .then(() => (limits?.signal?.aborted === true ? NOT_SENT : this.#send(request, transport)));
  }

  #send(request: WriteRequest, transport: Transport): Promise<ModelReply> {
    const { scheduler, clock, tape } = this.#context;
    const sender = scheduler.current;
    if (sender === undefined) throw new Error('provider model: write outside an actor');
    let fault: WriteFault = 'none';
    if (this.#context.faultsEnabled()) {
      fault = WRITE_FAULTS[tape.weighted(WRITE_FAULT_WEIGHTS)] ?? 'none';
    }
    if (fault !== 'none') this.#context.onFault(fault, 'provider_write', sender);
    const record: RequestRecord = {
      id: this.requests.length + 1,
      operation: request.operation,
      idempotencyKey: request.idempotencyKey ?? null,
      effect: request.effect ?? null,
      proposal: request.proposal ?? null,
      fault,
      sentAtMs: clock.now(),
      sentStep: scheduler.step,
      sender: { process: sender.process, incarnation: sender.incarnation, actor: sender.name },
      deliveries: 0,
      outcome: 'pending',
    };
    this.requests.push(record);
    const waiter = scheduler.suspend<ModelReply>('provider_write');
    const label = `${sender.name}: ${request.operation}`;
    const answer = (reply: () => ModelReply) => waiter.resumeWith(`${label} answer`, reply);
    const answerTimeout = () =>
      waiter.resumeWith(`${label} timeout`, () => {
        clock.advanceTo(record.sentAtMs + this.#config.clientTimeoutMs);
        return TIMEOUT;
      });
    /** The answer, unless it comes after the client gave up. */
    const answerInTime = (reply: ModelReply) =>
      waiter.resumeWith(`${label} answer`, () =>
        clock.now() > record.sentAtMs + this.#config.clientTimeoutMs ? TIMEOUT : reply,
      );
    const apply = (then: (reply: ModelReply) => void) =>
      scheduler.task(`${label} apply`, 'provider_write', () => then(this.#apply(record, request)));
    switch (fault) {
      case 'none':
        apply(answerInTime);
        break;
      case 'error_before_write':
        record.outcome = 'not_applied';
        answer(() => respond(500, { error: { type: 'api_error', code: 'internal' } }));
        break;
      case 'rejected':
        record.outcome = 'not_applied';
        answer(() => respond(402, { error: { type: 'card_error', code: 'card_declined' } }));
        break;
      case 'rate_limited':
        record.outcome = 'not_applied';
        answer(() => respond(429, { error: { type: 'rate_limit_error', code: 'rate_limit' } }));
        break;
      case 'lost_before_write':
        record.outcome = 'not_applied';
        answerTimeout();
        break;
      case 'lost_after_write':
        apply(() => answerTimeout());
        break;
      case 'error_after_write':
        apply(() => answer(() => respond(500, { error: { type: 'api_error' } })));
        break;
      case 'late_write':
        answerTimeout();
        apply(() => undefined);
        break;
      case 'transport_retry':
        // The first answer is lost on a reset. A retrying client re-sends the same request on
        // its own; the kit reports the reset (an unknown outcome) instead.
        if (transport === 'retrying') apply(() => apply(answerInTime));
        else apply(() => answer(() => RESET));
        break;
      case 'odd_text':
        if (tape.chance(50)) {
          record.outcome = 'not_applied';
          answer(() => respond(402, { error: { type: 'card_error', code: ODD_ERROR_CODE } }));
        } else {
          // Only a new object gets a provider-made id; a `set` keeps the caller's id.
          const odd = request.kind === 'create' && !this.#context.avoid.has('odd_receipt');
          apply((reply) => answerInTime(odd ? this.#oddReceipt(reply) : reply));
        }
        break;
    }
    return waiter.promise;
  }

  /** Reads (served at the moment the scheduler picks it); resolves with what the client saw. */
  read(request: ReadRequest): Promise<ProviderReply> {
    const { scheduler, tape } = this.#context;
    const sender = scheduler.current;
    if (sender === undefined) throw new Error('provider model: read outside an actor');
    let fault: ReadFault = 'none';
    if (this.#context.faultsEnabled())
      fault = READ_FAULTS[tape.weighted(READ_FAULT_WEIGHTS)] ?? 'none';
    if (fault !== 'none') this.#context.onFault(fault, 'provider_read', sender);
    return scheduler.pointValue(`${sender.name}: ${request.operation}`, 'provider_read', () => {
      if (fault === 'read_error') return respond(503, { error: { type: 'api_error' } });
      if (fault === 'read_timeout') {
        this.#context.clock.advance(this.#config.clientTimeoutMs);
        return TIMEOUT;
      }
      return this.#serve(request);
    });
  }

  #serve(request: ReadRequest): ProviderReply {
    if (request.objectId !== undefined) {
      const object = this.#find(request.collection, request.objectId);
      return object === undefined
        ? respond(404, { error: { type: 'invalid_request_error', code: 'resource_missing' } })
        : respond(200, view(object));
    }
    const data = this.list(request.collection)
      .filter((object) => request.where?.(object) ?? true)
      .map(view);
    return respond(200, { object: 'list', data, has_more: false });
  }

  /** The commit point: applies (or replays) one delivery of a request. */
  #apply(record: RequestRecord, request: WriteRequest): ProviderReply {
    const { clock, scheduler } = this.#context;
    if (clock.now() > record.sentAtMs + this.#config.maxInFlightMs) {
      record.outcome = 'died';
      return TIMEOUT;
    }
    record.deliveries += 1;
    const key = request.idempotencyKey;
    if (this.#config.honoursKeys && key !== undefined) {
      const seen = this.#answers.get(key);
      if (seen !== undefined) {
        record.outcome = record.outcome === 'pending' ? 'replayed' : record.outcome;
        return fingerprintOf(seen.request) === fingerprintOf(request)
          ? seen.reply
          : respond(400, { error: { type: 'idempotency_error', code: 'idempotency_key_reuse' } });
      }
    }
    let object: ModelObject | undefined;
    if (request.kind === 'create') {
      this.#ids += 1;
      const prefix = request.collection.slice(0, 2);
      object = {
        id: `${prefix}_${String(this.#ids).padStart(5, '0')}`,
        collection: request.collection,
        fields: { ...request.fields },
        effect: request.effect ?? null,
        proposal: request.proposal ?? null,
      };
      this.#store(object);
    } else {
      object = this.#find(request.collection, request.objectId ?? '');
      if (object === undefined) {
        record.outcome = record.outcome === 'pending' ? 'refused' : record.outcome;
        return respond(404, { error: { type: 'invalid_request_error', code: 'resource_missing' } });
      }
      // A domain rule seeded on the object: the provider refuses this operation on it.
      if (object.fields.refuses === request.operation) {
        record.outcome = record.outcome === 'pending' ? 'refused' : record.outcome;
        return respond(422, {
          error: { type: 'invalid_request_error', code: 'operation_refused' },
        });
      }
      // Not `{ ...a, ...b }`: a literal that starts with a spread takes V8's slow path.
      object.fields = Object.assign({}, object.fields, request.fields);
    }
    record.outcome = 'applied';
    this.writes.push({
      sequence: ++this.#sequence,
      requestId: record.id,
      operation: request.operation,
      kind: request.kind,
      objectId: object.id,
      effect: request.effect ?? null,
      proposal: request.proposal ?? null,
      idempotencyKey: key ?? null,
      fields: { ...request.fields },
      atMs: clock.now(),
      step: scheduler.step,
    });
    const reply = respond(200, view(object));
    if (key !== undefined) this.#answers.set(key, { request, reply });
    return reply;
  }

  /** The odd-text fault on success: the object's id (and so every later read) carries a lone surrogate. */
  #oddReceipt(reply: ModelReply): ModelReply {
    if (reply.kind !== 'response' || reply.status !== 200) return reply;
    const body = reply.body as { id: string; object: string };
    const stored = [...this.objects.values()].find((object) => object.id === body.id);
    if (stored === undefined) return reply;
    const renamed: ModelObject = { ...stored, id: oddId(stored.id) };
    this.#remove(stored);
    this.#store(renamed);
    const last = this.writes.at(-1);
    if (last !== undefined && last.objectId === stored.id) {
      this.writes[this.writes.length - 1] = { ...last, objectId: renamed.id };
    }
    return respond(200, view(renamed));
  }
}

/**
 * What a replayed request must match to get the first answer back: operation, target and fields.
 * Computed only when a key is seen again (requests are never changed after they are sent).
 */
const fingerprintOf = (request: WriteRequest): string =>
  JSON.stringify([request.operation, request.objectId ?? null, request.fields]);

/** The JSON a client sees for an object (Stripe-like: id, object, fields, metadata). */
function view(object: ModelObject): Record<string, unknown> {
  // No spread: V8 defines a property that follows a spread in a literal through the runtime, and
  // on Node 20 a property added to an object a spread made builds a new map each time; every
  // reply is a view. `Object.assign` into the literal takes the shared transitions. Same keys,
  // same order.
  const metadata: Record<string, string> = {};
  if (object.effect !== null) metadata.sideguard_effect = object.effect;
  if (object.proposal !== null) metadata.sideguard_proposal = object.proposal;
  const json: Record<string, unknown> = Object.assign(
    { id: object.id, object: object.collection },
    object.fields,
  );
  json.metadata = metadata;
  return json;
}

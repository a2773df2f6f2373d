/**
 * What the HTTP door passes between its steps, whichever server received the request: the
 * request as the door reads it, the checked call the decision is made on, and the answer whose
 * status and codes go into the decision event.
 */
import type { AgentIdentity } from './decide-call.js';
import type { RequestHeaders, RequestRefusal } from './http-request-reader.js';

/** One agent request addressed to an upstream, as the door reads it. */
export interface DoorRequest {
  readonly upstream: string;
  /** As received; the door upper-cases it. */
  readonly method: string;
  /** The raw target relative to the upstream's mount: `/v1/refunds?limit=3`, still encoded. */
  readonly target: string;
  readonly headers: RequestHeaders;
  /** Reads the body, never more than `limitBytes + 1` bytes. */
  readBody(limitBytes: number): Promise<Uint8Array | RequestRefusal>;
}

/** A checked request, ready for the decision. */
export interface CheckedCall {
  readonly upstream: string;
  readonly headers: RequestHeaders;
  readonly method: string;
  readonly rawPath: string;
  readonly search: string;
  readonly segments: readonly string[];
  readonly pairs: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  readonly identity: AgentIdentity;
}

/** A reply the door hands back to its server: anything with a status (a `Response`, a stream). */
export interface DoorReply {
  readonly status: number;
}

/** What answering a decision produced, for the decision event. */
export interface Answer<R extends DoorReply = Response> {
  readonly response: R;
  readonly code: string;
  readonly proposal?: string;
  readonly outcome?: string;
}

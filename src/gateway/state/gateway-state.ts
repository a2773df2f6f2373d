/**
 * The gateway's own durable state, beside the guard's store and opened from the same location:
 * shadowed writes, recorded replay cases and the decision log. Several `sideguard serve`
 * processes on one store share it, so they behave as one gateway. Payloads arrive already
 * sealed (encrypted) by the caller; a state store never sees private data in the clear.
 */

/** One shadowed write: the latest for a resource answers a later read of it. */
export interface ShadowWriteRecord {
  readonly tenant: string;
  readonly upstream: string;
  /** `path?normalisedQuery` of the write; a GET of the same resource reads it back. */
  readonly resource: string;
  readonly method: string;
  readonly recordedAtMs: number;
  /** The sealed envelope (JSON text) of the shadowed request. */
  readonly sealed: string;
}

/** One response recorded by `sideguard record`. */
export interface ReplayCaseRecord {
  readonly session: string;
  readonly upstream: string;
  /** `METHOD path?normalisedQuery`. */
  readonly caseKey: string;
  readonly recordedAtMs: number;
  /** The sealed envelope (JSON text) of the recorded response. */
  readonly sealed: string;
}

/** One gateway decision: allow-listed metadata only (no bodies, no credentials). */
export interface DecisionRecord {
  readonly tenant: string;
  readonly atMs: number;
  /** Canonical JSON of the decision event. */
  readonly event: string;
}

/** A decision as stored, with its position in the log. */
export interface StoredDecisionRecord extends DecisionRecord {
  readonly sequence: number;
}

/** Persistence of gateway-only state. All members are safe to call concurrently. */
export interface GatewayStateStore {
  /** `memory`, `sqlite` or `postgres`. */
  readonly kind: string;
  appendShadowWrite(record: ShadowWriteRecord): Promise<void>;
  /** The most recent shadowed write of a resource, if any. */
  latestShadowWrite(
    tenant: string,
    upstream: string,
    resource: string,
  ): Promise<ShadowWriteRecord | undefined>;
  /** Every shadowed write, oldest first; of one tenant when given. */
  listShadowWrites(tenant?: string): Promise<readonly ShadowWriteRecord[]>;
  /** Forgets shadowed writes (of one tenant when given); returns how many. */
  resetShadow(tenant?: string): Promise<number>;
  appendReplayCase(record: ReplayCaseRecord): Promise<void>;
  /** The cases of a recording session, oldest first. */
  listReplayCases(session: string): Promise<readonly ReplayCaseRecord[]>;
  /** Appends decisions in order (one batch, one transaction). */
  appendDecisions(records: readonly DecisionRecord[]): Promise<void>;
  /** Decisions of a tenant after `afterSequence`, oldest first. @default all */
  listDecisions(query: {
    readonly tenant: string;
    readonly afterSequence?: number;
    readonly limit?: number;
  }): Promise<readonly StoredDecisionRecord[]>;
  /** Releases connections; further calls fail. */
  close(): Promise<void>;
}

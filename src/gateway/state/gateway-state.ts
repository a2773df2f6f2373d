/**
 * The gateway's own durable state, beside the guard's store and opened from the same location:
 * shadowed writes and recorded replay cases (decisions are ledger events in the guard's store,
 * decision 070; the `gateway_decisions` table of schema 1 is no longer written). Several `sideguard serve`
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
  /** Releases connections; further calls fail. */
  close(): Promise<void>;
}

/** Gateway state in process memory: for tests and a gateway with the memory store. */
import type {
  DecisionRecord,
  GatewayStateStore,
  ReplayCaseRecord,
  ShadowWriteRecord,
  StoredDecisionRecord,
} from './gateway-state.js';

/** A state store that lives as long as the process. */
export function createMemoryGatewayState(): GatewayStateStore {
  let shadow: ShadowWriteRecord[] = [];
  const cases: ReplayCaseRecord[] = [];
  const decisions: StoredDecisionRecord[] = [];
  return {
    kind: 'memory',
    appendShadowWrite: async (record) => {
      shadow.push(record);
    },
    latestShadowWrite: async (tenant, upstream, resource) =>
      shadow.findLast(
        (entry) =>
          entry.tenant === tenant && entry.upstream === upstream && entry.resource === resource,
      ),
    listShadowWrites: async (tenant) =>
      shadow.filter((entry) => tenant === undefined || entry.tenant === tenant),
    resetShadow: async (tenant) => {
      const before = shadow.length;
      shadow = shadow.filter((entry) => tenant !== undefined && entry.tenant !== tenant);
      return before - shadow.length;
    },
    appendReplayCase: async (record) => {
      cases.push(record);
    },
    listReplayCases: async (session) => cases.filter((entry) => entry.session === session),
    appendDecisions: async (records: readonly DecisionRecord[]) => {
      for (const record of records) decisions.push({ ...record, sequence: decisions.length + 1 });
    },
    listDecisions: async ({ tenant, afterSequence = 0, limit = Number.MAX_SAFE_INTEGER }) =>
      decisions
        .filter((entry) => entry.tenant === tenant && entry.sequence > afterSequence)
        .slice(0, limit),
    close: async () => {},
  };
}

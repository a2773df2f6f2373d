/** Gateway state in process memory: for tests and a gateway with the memory store. */
import type { GatewayStateStore, ReplayCaseRecord, ShadowWriteRecord } from './gateway-state.js';

/** A state store that lives as long as the process. */
export function createMemoryGatewayState(): GatewayStateStore {
  let shadow: ShadowWriteRecord[] = [];
  const cases: ReplayCaseRecord[] = [];
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
    close: async () => {},
  };
}

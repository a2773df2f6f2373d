/**
 * One ledger operation on the growth store in its own process, so its peak RSS is its own:
 * `export` (`guard.exportLedgerChunks` of the measured tenant, streamed to a JSONL file) or `verify`
 * (`guard.verifyLedger` of that tenant against the store's head). Prints one JSON line:
 * `{ ms, events?, bytes?, verdict?, maxRssMb }` (time excludes opening the store).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDevelopmentKeyRing, createGuard } from '../../../dist/index.js';
import { createSqliteStore } from '../../../dist/stores/sqlite/index.js';

const [mode, path, tenant, out] = process.argv.slice(2);
const store = createSqliteStore({ path, checkOnOpen: 'none' });
const guard = createGuard({ store, keyRing: createDevelopmentKeyRing() });
const started = performance.now();
let report;
if (mode === 'export') {
  let bytes = 0;
  let events = 0;
  const counted = async function* () {
    for await (const chunk of guard.exportLedgerChunks({ tenant })) {
      bytes += Buffer.byteLength(chunk);
      for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) events += 1;
      yield chunk;
    }
  };
  await pipeline(Readable.from(counted()), createWriteStream(out));
  report = { ms: performance.now() - started, bytes, events };
} else if (mode === 'verify') {
  const verdict = await guard.verifyLedger({ tenant });
  report = { ms: performance.now() - started, verdict: verdict.kind, events: verdict.count };
} else {
  throw new Error(`ledger-worker: unknown mode ${mode}`);
}
await store.close();
process.stdout.write(
  `${JSON.stringify({ ...report, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);

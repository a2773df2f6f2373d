/**
 * One ledger operation on the growth store in its own process, so its peak RSS is its own:
 * `export` (`guard.exportLedger` of the measured tenant, written to a JSONL file) or `verify`
 * (`guard.verifyLedger` of that tenant against the store's head). Prints one JSON line:
 * `{ ms, events?, bytes?, verdict?, maxRssMb }` (time excludes opening the store).
 */
import { writeFileSync } from 'node:fs';
import { createDevelopmentKeyRing, createGuard } from '../../../dist/index.js';
import { createSqliteStore } from '../../../dist/stores/sqlite/index.js';

const [mode, path, tenant, out] = process.argv.slice(2);
const store = createSqliteStore({ path, checkOnOpen: 'none' });
const guard = createGuard({ store, keyRing: createDevelopmentKeyRing() });
const started = performance.now();
let report;
if (mode === 'export') {
  const text = await guard.exportLedger({ tenant });
  const ms = performance.now() - started;
  writeFileSync(out, text);
  report = { ms, bytes: Buffer.byteLength(text), events: text.split('\n').length - 1 };
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

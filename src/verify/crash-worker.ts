/**
 * A child process for the crash scenario: it executes one proposal and kills itself with
 * SIGKILL right after the provider committed, before the guard records the result — the
 * worst moment to die. Usage: `node crash-worker.js '<json config>'` (the runner builds it).
 */
import { createManualClock } from '../core/clock.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import { createGuard } from '../create-guard.js';
import { defineRefundAction, defineRefundAndCloseAction } from './refund-actions.js';
import { openStore, type StoreLocation } from './store-location.js';

interface WorkerConfig {
  readonly store: StoreLocation;
  readonly keyRingLabel: string;
  readonly tenant: string;
  readonly proposal: string;
  readonly action: string;
  readonly dataUrl: string;
  readonly clockMs: number;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
  const store = await openStore(config.store);
  const endpoints = { dataUrl: config.dataUrl };
  const real =
    config.action === 'support.refund_and_close@1'
      ? defineRefundAndCloseAction(endpoints)
      : defineRefundAction(endpoints);
  const dying = { ...real, config: { ...real.config } };
  // The crash point: after the provider's answer arrived, before the guard can record it.
  (dying.config as { execute: unknown }).execute = async (input: never, context: never) => {
    await real.config.execute(input, context);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  };
  const guard = createGuard({
    store,
    keyRing: createDevelopmentKeyRing(config.keyRingLabel),
    clock: createManualClock(config.clockMs),
  });
  await guard.execute(dying as typeof real, { tenant: config.tenant, proposal: config.proposal });
  process.stderr.write('crash worker: execute returned without reaching the crash point\n');
  process.exit(3);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `crash worker failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(2);
});

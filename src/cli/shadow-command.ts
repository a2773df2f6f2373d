/**
 * `sideguard shadow export|reset`: the writes a `shadow`-mode upstream recorded instead of
 * sending, read from (or cleared in) the configured store, decrypted with SIDEGUARD_KEYS.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';

async function openState(configOption: string | undefined) {
  const gateway = await import('../gateway/index.js');
  const loaded = await gateway.loadGatewayConfig(
    gateway.locateConfigFile(configOption, process.cwd()),
  );
  const keyRing = gateway.keyRingFromEnvironment();
  const location = gateway.parseGatewayStore(
    loaded.config.store,
    loaded.directory,
    loaded.config.storeSchema,
  );
  const { store, state } = await gateway.openGatewayStores(location);
  return { gateway, keyRing, store, state };
}

/** Registers `shadow export` and `shadow reset`. */
export function registerShadowCommand(program: Command): void {
  const shadow = program
    .command('shadow')
    .description('Export or reset what shadow-mode upstreams recorded');
  shadow
    .command('export')
    .description('Print (or write) the shadowed writes as JSON')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--out <file>', 'write to a file instead of stdout')
    .action(async (options: { config?: string; tenant?: string; out?: string }) => {
      const { gateway, keyRing, store, state } = await openState(options.config);
      try {
        const document = await gateway.exportShadowState(state, keyRing, options.tenant);
        const text = `${JSON.stringify(document, null, 2)}\n`;
        if (options.out === undefined) process.stdout.write(text);
        else await writeFile(options.out, text, 'utf8');
      } finally {
        await state.close();
        await store.close();
      }
    });
  shadow
    .command('reset')
    .description('Forget the shadowed writes (reads go to the upstream again)')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--tenant <tenant>', 'only this tenant')
    .action(async (options: { config?: string; tenant?: string }) => {
      const { state, store } = await openState(options.config);
      try {
        const removed = await state.resetShadow(options.tenant);
        process.stdout.write(`removed ${removed} shadowed write(s)\n`);
      } finally {
        await state.close();
        await store.close();
      }
    });
}

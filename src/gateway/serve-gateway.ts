/**
 * One call that runs a gateway from a config file: load and compile it, start the built-in
 * sandbox when an upstream uses `sandbox` mode, open the runtime, start the listeners. What
 * `sideguard serve` and `sideguard record` run, and what tests start.
 */
import { resolve } from 'node:path';
import type { KeyRing } from '../core/key-ring.js';
import {
  type GatewayNotifications,
  openGatewayNotifications,
} from '../notify/gateway-notifications.js';
import { type LoadedGatewayConfig, loadGatewayConfig } from './config-loader.js';
import {
  type GatewayRuntime,
  type GatewayStoreLocation,
  openGatewayRuntime,
} from './gateway-runtime.js';
import {
  type GatewayExtension,
  type RunningGateway,
  startGatewayServer,
} from './gateway-server.js';
import { type RunningSweeper, type SweepSummary, startSweeper } from './sweeper.js';
import { sweptActions } from './sweeper-actions.js';

/** Options of {@link serveGateway}. */
export interface ServeGatewayOptions {
  /** The config file (`.ts`, `.mts`, `.mjs`, `.js`). */
  readonly configFile: string;
  readonly extensions?: readonly GatewayExtension[];
  /** Overrides of the config's `server.host` / `server.port` / upstream ports (tests use 0). */
  readonly host?: string;
  readonly port?: number;
  readonly upstreamPorts?: Readonly<Record<string, number>>;
  /** @default the config's `store` */
  readonly store?: GatewayStoreLocation;
  /** @default from `SIDEGUARD_KEYS` */
  readonly keyRing?: KeyRing;
  /** Record forwarded responses into this session (`sideguard record`). */
  readonly recordSession?: string;
  /** Sandbox state directory override. @default the config's `sandbox.stateDir` */
  readonly sandboxStateDir?: string;
  /**
   * The sweeper: `false` runs none; otherwise overrides of the config's `sweeper`.
   * @default the config's `sweeper` (on, every 5 s)
   */
  readonly sweeper?: false | { readonly intervalMs?: number };
  /** One line per sweeper problem and per webhook drop or retry. @default stderr */
  readonly log?: (line: string) => void;
  /** Where the webhook secret's variable is read. @default process.env */
  readonly environment?: NodeJS.ProcessEnv;
  /**
   * The approvals console's port (0 picks one), overriding the config's `approvals.port`. The
   * console starts when either is set. @default the config's
   */
  readonly consolePort?: number;
}

/** A running gateway with everything it opened. */
export interface ServedGateway extends RunningGateway {
  readonly loaded: LoadedGatewayConfig;
  readonly runtime: GatewayRuntime;
  /** The built-in sandbox, when an upstream uses `sandbox` mode. */
  readonly sandbox:
    | { readonly dataUrl: string; readonly controlUrl: string | undefined }
    | undefined;
  /** The running sweeper, unless disabled. */
  readonly sweeper: RunningSweeper | undefined;
  /** The webhook notifications, when configured. */
  readonly notifications: GatewayNotifications | undefined;
  /** The approvals console, when the config's `approvals.port` (or `consolePort`) is set. */
  readonly console: { readonly url: string } | undefined;
}

const usesSandbox = (loaded: LoadedGatewayConfig): boolean =>
  [...loaded.table.upstreams.values()].some((upstream) => upstream.mode === 'sandbox');

/** A pass summary as one log line, or undefined when the pass did nothing worth a line. */
export function sweepLogLine(summary: SweepSummary): string | undefined {
  const moved = summary.expired + summary.verified + summary.released + summary.other;
  if (moved === 0 && summary.errors.length === 0) return undefined;
  const failures = summary.errors.map(
    (error) => `${error.action} in ${error.tenant}: ${error.message}`,
  );
  return `sideguard sweeper: expired ${summary.expired}, verified ${summary.verified}, released ${summary.released}, still unresolved ${summary.unresolved}${failures.length === 0 ? '' : `; failed: ${failures.join('; ')}`}`;
}

function startServeSweeper(
  runtime: GatewayRuntime,
  loaded: LoadedGatewayConfig,
  override: ServeGatewayOptions['sweeper'],
  log: (line: string) => void,
): RunningSweeper | undefined {
  const config = loaded.config.sweeper ?? {};
  if (override === false || (override === undefined && config.enabled === false)) return undefined;
  const intervalMs = override?.intervalMs ?? config.intervalMs;
  return startSweeper({
    guard: runtime.guard,
    store: runtime.store,
    actions: sweptActions(runtime),
    ...(intervalMs === undefined ? {} : { intervalMs }),
    onPass: (summary) => {
      const line = sweepLogLine(summary);
      if (line !== undefined) log(line);
    },
    onError: (error) =>
      log(
        `sideguard sweeper: a pass failed (${error instanceof Error ? error.message : String(error)})`,
      ),
  });
}

/** Loads, opens and starts. On a failure, whatever was started is stopped again. */
export async function serveGateway(options: ServeGatewayOptions): Promise<ServedGateway> {
  const loaded = await loadGatewayConfig(options.configFile);
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => {});
  };
  try {
    let sandbox: ServedGateway['sandbox'];
    if (usesSandbox(loaded)) {
      const { startSandbox } = await import('../sandbox/index.js');
      const settings = loaded.config.sandbox ?? {};
      const running = await startSandbox({
        stateDir:
          options.sandboxStateDir ??
          resolve(loaded.directory, settings.stateDir ?? '.sideguard/sandbox'),
        ...(settings.seed === undefined ? {} : { seed: settings.seed }),
        ...(settings.faults === undefined ? {} : { faults: settings.faults }),
      });
      cleanups.push(() => running.close());
      sandbox = { dataUrl: running.dataUrl, controlUrl: running.controlUrl };
    }
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const notifications = openGatewayNotifications({
      config: loaded.config.notifications,
      consoleUrl: loaded.table.consoleUrl,
      log,
      ...(options.environment === undefined ? {} : { environment: options.environment }),
    });
    if (notifications !== undefined) cleanups.push(() => notifications.close());
    const runtime = await openGatewayRuntime(loaded, {
      ...(notifications === undefined ? {} : { events: notifications.events }),
      ...(options.keyRing === undefined ? {} : { keyRing: options.keyRing }),
      ...(options.store === undefined ? {} : { store: options.store }),
      ...(sandbox === undefined ? {} : { sandboxDataUrl: sandbox.dataUrl }),
      ...(options.recordSession === undefined ? {} : { recordSession: options.recordSession }),
    });
    cleanups.push(() => runtime.close());
    const sweeper = startServeSweeper(runtime, loaded, options.sweeper, log);
    if (sweeper !== undefined) cleanups.push(() => sweeper.close());
    const server = await startGatewayServer(runtime, {
      ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.upstreamPorts === undefined ? {} : { upstreamPorts: options.upstreamPorts }),
    });
    cleanups.push(() => server.close());
    const approvalsConsole = await startConsole(loaded, runtime, options);
    if (approvalsConsole !== undefined) cleanups.push(() => approvalsConsole.close());
    let closing: Promise<void> | undefined;
    return {
      ...server,
      loaded,
      runtime,
      sandbox,
      sweeper,
      notifications,
      console: approvalsConsole === undefined ? undefined : { url: approvalsConsole.url },
      close: () => {
        closing ??= cleanup();
        return closing;
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** The approvals console on its own port, sharing the runtime's guard and store. */
async function startConsole(
  loaded: LoadedGatewayConfig,
  runtime: GatewayRuntime,
  options: ServeGatewayOptions,
): Promise<{ url: string; close(): Promise<void> } | undefined> {
  const settings = loaded.config.approvals ?? {};
  const port = options.consolePort ?? settings.port;
  if (port === undefined) return undefined;
  const { createConsole } = await import('../console/console-server.js');
  return createConsole({
    guard: runtime.guard,
    store: runtime.store,
    actions: runtime.table.actions.values(),
    approvers: loaded.config.approvers ?? [],
    defaultTenant: runtime.table.tenant,
    host: settings.host ?? '127.0.0.1',
    port,
  });
}

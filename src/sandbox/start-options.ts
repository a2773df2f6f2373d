/**
 * The options of `startSandbox`, checked before anything is created: providers, ports and hosts,
 * seed, idempotency modes, the fault plan against the enabled providers, API keys and the
 * control token. A bad option throws `SandboxConfigError` and leaves no trace.
 */
import { randomBytes } from 'node:crypto';
import { defaultBodyLimitBytes } from './data-plane.js';
import { checkFaultPlanTargets, type FaultPlan, parseFaultPlan } from './fault-plan.js';
import { KeyTable, type SandboxApiKey } from './identity.js';
import { builtInProviders, defaultProviderNames } from './providers/provider-registry.js';
import { SandboxConfigError } from './sandbox-errors.js';
import { checkHost, defaultSandboxHost } from './sandbox-listeners.js';
import type { IdempotencyMode } from './sandbox-runtime.js';
import type { ProviderDefinition, ProviderName } from './sandbox-types.js';
import type { SandboxDurability } from './state-store.js';

/** Environment variable the control token is read from when no token option is given. */
export const controlTokenEnvironmentVariable = 'SIDEGUARD_SANDBOX_TOKEN';

/** Where the control token came from. */
export const ControlTokenSource = {
  option: 'option',
  environment: 'environment',
  generated: 'generated',
} as const;
export type ControlTokenSource = (typeof ControlTokenSource)[keyof typeof ControlTokenSource];

/** Options of {@link startSandbox}. */
export interface StartSandboxOptions {
  /** Providers to serve, by name or definition. @default payments, crm, issues, orders (`retail` is opt-in) */
  readonly providers?: readonly (ProviderName | ProviderDefinition)[];
  /** Directory holding state, journal and snapshots; created when missing; one sandbox at a time. */
  readonly stateDir: string;
  /** Seed for seed data, ids and probabilistic faults. @default the stored seed, else 1 */
  readonly seed?: number;
  /** A fault plan (validated; see `parseFaultPlan`); reset restores it. @default none */
  readonly faults?: FaultPlan | unknown;
  /** Data-plane port; 0 picks a free one. @default 0 */
  readonly port?: number;
  /**
   * Address the data plane listens on: an IP literal or host name; `0.0.0.0` or `::` for every
   * interface (to serve other machines or containers). @default '127.0.0.1'
   */
  readonly host?: string;
  /** Control-plane port; 0 picks a free one. Ignored when `controlSocket` is set. @default 0 */
  readonly controlPort?: number;
  /**
   * Address the control plane listens on. It stays on loopback even when `host` opens the data
   * plane wider: only set this to reach the control plane from elsewhere. @default '127.0.0.1'
   */
  readonly controlHost?: string;
  /** Unix socket path for the control plane (mode 0600) instead of a port. */
  readonly controlSocket?: string;
  /** Control bearer token. @default $SIDEGUARD_SANDBOX_TOKEN, else 32 random bytes (base64url) */
  readonly controlToken?: string;
  /** Per provider: honour Stripe-style idempotency keys, or ignore them. @default honour */
  readonly idempotency?: { readonly payments?: IdempotencyMode } & Readonly<
    Record<string, IdempotencyMode>
  >;
  /** Largest data-plane request body, in bytes; larger gets 413. @default 65 536 */
  readonly bodyLimitBytes?: number;
  /** Accepted API keys. @default every provider's `defaultKeys` */
  readonly apiKeys?: readonly SandboxApiKey[];
  /** How a commit reaches storage before the answer. @default 'fsync' */
  readonly durability?: SandboxDurability;
  /** Clock in milliseconds since the epoch. @default Date.now */
  readonly nowMs?: () => number;
}

/** Options after validation, with every default filled in. */
export interface StartSettings {
  readonly providers: readonly ProviderDefinition[];
  readonly bodyLimitBytes: number;
  readonly faultPlan: FaultPlan | null;
  readonly keys: KeyTable;
  readonly token: string;
  readonly tokenSource: ControlTokenSource;
  readonly host: string;
  readonly controlHost: string;
}

/** Validates every option; throws `SandboxConfigError` naming the first bad one. Touches no file. */
export function resolveStartSettings(options: StartSandboxOptions): StartSettings {
  const providers = resolveProviders(options.providers);
  const providerMap = new Map(providers.map((provider) => [provider.name, provider]));
  const bodyLimitBytes = options.bodyLimitBytes ?? defaultBodyLimitBytes;
  if (
    options.controlSocket === undefined &&
    options.port !== undefined &&
    options.port !== 0 &&
    options.port === options.controlPort
  ) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `The data plane and the control plane need different ports (both are ${options.port}): the control plane must never be reachable where providers' clients connect`,
    );
  }
  if (!Number.isInteger(bodyLimitBytes) || bodyLimitBytes < 1) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `Invalid bodyLimitBytes ${String(bodyLimitBytes)}: use a positive integer`,
    );
  }
  if (
    options.seed !== undefined &&
    (!Number.isInteger(options.seed) || options.seed < 0 || options.seed > 2 ** 32 - 1)
  ) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `Invalid seed ${String(options.seed)}: use an integer from 0 to 4294967295`,
    );
  }
  for (const [name, mode] of Object.entries(options.idempotency ?? {})) {
    if (!providerMap.get(name)?.idempotency) {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Invalid idempotency option: provider ${JSON.stringify(name)} is not enabled or has no idempotency keys`,
      );
    }
    if (mode !== 'honour' && mode !== 'ignore') {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Invalid idempotency mode ${JSON.stringify(mode)} for ${name}: use "honour" or "ignore"`,
      );
    }
  }
  const faultPlan = options.faults === undefined ? null : parseFaultPlan(options.faults);
  const keys = new KeyTable(
    options.apiKeys ??
      providers.flatMap((provider) =>
        provider.defaultKeys.map((entry) => ({
          provider: provider.name,
          role: entry.role,
          key: entry.key,
        })),
      ),
    providerMap,
  );
  const { token, source } = resolveToken(options.controlToken);

  if (faultPlan !== null) checkFaultPlanTargets(faultPlan, providers);
  return {
    providers,
    bodyLimitBytes,
    faultPlan,
    keys,
    token,
    tokenSource: source,
    host: checkHost('host', options.host ?? defaultSandboxHost),
    controlHost: checkHost('controlHost', options.controlHost ?? defaultSandboxHost),
  };
}

function resolveProviders(requested: StartSandboxOptions['providers']): ProviderDefinition[] {
  const list = (requested ?? defaultProviderNames).map((entry) => {
    if (typeof entry !== 'string') return entry;
    const provider = builtInProviders[entry as ProviderName];
    if (provider === undefined) {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Unknown provider ${JSON.stringify(entry)} (built-in: ${Object.keys(builtInProviders).join(', ')})`,
      );
    }
    return provider;
  });
  const names = new Set<string>();
  for (const provider of list) {
    if (names.has(provider.name))
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Provider ${provider.name} is listed twice`,
      );
    names.add(provider.name);
  }
  for (const provider of list) {
    for (const dependency of provider.dependsOn ?? []) {
      if (!names.has(dependency)) {
        throw new SandboxConfigError(
          'sandbox_option_invalid',
          `Provider ${provider.name} needs provider ${dependency}; enable it too`,
        );
      }
    }
  }
  return list;
}

function resolveToken(option: string | undefined): { token: string; source: ControlTokenSource } {
  const fromEnvironment = process.env[controlTokenEnvironmentVariable];
  const [token, source] =
    option !== undefined
      ? [option, ControlTokenSource.option]
      : fromEnvironment !== undefined && fromEnvironment !== ''
        ? [fromEnvironment, ControlTokenSource.environment]
        : [randomBytes(32).toString('base64url'), ControlTokenSource.generated];
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      'Invalid control token: use 16–512 printable ASCII characters without spaces',
    );
  }
  return { token, source };
}

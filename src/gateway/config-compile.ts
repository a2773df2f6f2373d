/**
 * Turns a loaded config into the `GatewayTable` both doors decide on, collecting every problem
 * (not just the first) with its path and what to change: unknown references, routes bound twice,
 * bad mounts, agents without usable keys. Pure apart from hashing agent keys.
 */
import { checkApprovers } from '../approvals/approver-registry.js';
import type { ActionDefinition } from '../core/action.js';
import { ConfigurationError } from '../core/errors.js';
import { hashAgentKey } from './agent-identity.js';
import { type ConfigProblem, checkConfigShape } from './config-schema.js';
import type {
  BindingConfig,
  GatewayConfig,
  HttpReadBindingConfig,
  HttpUpstreamConfig,
  HttpWriteBindingConfig,
  McpToolBindingConfig,
  UpstreamConfig,
} from './config-types.js';
import type {
  CompiledAgent,
  CompiledDenyRule,
  CompiledHttpBinding,
  CompiledToolBinding,
  CompiledUpstream,
  GatewayTable,
} from './gateway-table.js';
import { SERVER_DEFAULTS } from './gateway-table.js';
import {
  compareSpecificity,
  isReadMethod,
  parseRoute,
  type RoutePattern,
  splitPath,
} from './route-pattern.js';

/** A config that cannot run: every problem, with the file it came from. */
export class GatewayConfigError extends ConfigurationError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];
  constructor(file: string, problems: readonly ConfigProblem[]) {
    super(
      'gateway_config_invalid',
      `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems
        .map((problem) => `  ${problem.path}: ${problem.message}`)
        .join('\n')}`,
      { data: { file, problems: problems.map((problem) => ({ ...problem })) } },
    );
    this.file = file;
    this.problems = problems;
  }
}

/** The result of compiling: a table when there are no problems. */
export type CompileResult =
  | { readonly kind: 'compiled'; readonly table: GatewayTable }
  | { readonly kind: 'invalid'; readonly problems: readonly ConfigProblem[] };

const UPSTREAM_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const BINDING_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const TOOL_DIGEST = /^sha256:[0-9a-f]{64}$/;
/** Paths the gateway keeps for itself on the main port. */
const RESERVED_PREFIXES = ['mcp', '.well-known', 'sideguard'];

/** Checks and compiles a config. Never throws for a bad config: problems are returned. */
export function compileGatewayConfig(value: unknown): CompileResult {
  const shape = checkConfigShape(value);
  if (shape.length > 0) return { kind: 'invalid', problems: shape };
  const config = value as GatewayConfig;
  const problems: ConfigProblem[] = [];
  const report = (path: string, message: string) => problems.push({ path, message });

  const actions = compileActions(config, report);
  const upstreams = compileUpstreams(config, report);
  const { httpBindings, toolBindings, names } = compileBindings(config, upstreams, actions, report);
  const roles = compileRoles(config, upstreams, actions, names, report);
  const agents = compileAgents(config, roles, report);
  const deny = compileDenyRules(config, upstreams, report);
  for (const problem of checkApprovers(config.approvers ?? []))
    report(problem.path, problem.message);
  const server = { ...SERVER_DEFAULTS, ...config.server };
  for (const [upstream, compiled] of upstreams) {
    const mount = compiled.kind === 'http' ? (compiled.config as HttpUpstreamConfig).mount : null;
    if (mount !== null && 'port' in mount && mount.port !== 0 && mount.port === server.port) {
      report(
        `upstreams.${upstream}.mount.port`,
        `port ${mount.port} is the gateway's main port (server.port); give the upstream its own port or a prefix`,
      );
    }
  }
  if (problems.length > 0) return { kind: 'invalid', problems };
  return {
    kind: 'compiled',
    table: {
      tenant: config.tenant ?? 'default',
      upstreams,
      httpBindings,
      toolBindings,
      actions,
      agents,
      roles,
      deny,
      server,
      consoleUrl: consoleUrlOf(config),
    },
  };
}

type Report = (path: string, message: string) => void;

/** Where pending answers link: the configured URL, else the console's own fixed address. */
function consoleUrlOf(config: GatewayConfig): string | undefined {
  const approvals = config.approvals;
  if (approvals?.consoleUrl !== undefined) return approvals.consoleUrl;
  if (approvals?.port === undefined || approvals.port === 0) return undefined;
  const host = approvals.host ?? '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${approvals.port}`;
}

function compileActions(config: GatewayConfig, report: Report): Map<string, ActionDefinition> {
  const actions = new Map<string, ActionDefinition>();
  config.actions.forEach((action, index) => {
    if (actions.has(action.typeName)) {
      report(`actions[${index}]`, `${action.typeName} is declared twice; declare each action once`);
    }
    actions.set(action.typeName, action);
  });
  return actions;
}

function compileUpstreams(config: GatewayConfig, report: Report): Map<string, CompiledUpstream> {
  const upstreams = new Map<string, CompiledUpstream>();
  const prefixes: { name: string; segments: readonly string[] }[] = [];
  const ports = new Map<number, string>();
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const path = `upstreams.${name}`;
    if (!UPSTREAM_NAME.test(name)) {
      report(path, 'upstream names are lower-case letters, digits, _ and - (at most 64)');
    }
    if (upstream.kind === 'http') checkHttpUpstream(path, name, upstream, prefixes, ports, report);
    const mode = upstream.mode ?? 'live';
    upstreams.set(name, {
      name,
      kind: upstream.kind,
      mode,
      passReads: upstream.kind === 'http' && upstream.passReads === true,
      config: upstream as UpstreamConfig,
    });
  }
  return upstreams;
}

function checkHttpUpstream(
  path: string,
  name: string,
  upstream: HttpUpstreamConfig,
  prefixes: { name: string; segments: readonly string[] }[],
  ports: Map<number, string>,
  report: Report,
): void {
  const mode = upstream.mode ?? 'live';
  if (mode === 'sandbox') {
    if (upstream.sandboxProvider === undefined && upstream.credentials === undefined) {
      report(
        `${path}.sandboxProvider`,
        'sandbox mode needs sandboxProvider (payments, crm, issues or orders) or credentials',
      );
    }
  } else if (upstream.baseUrl === undefined || !/^https?:\/\/[^/]/.test(upstream.baseUrl)) {
    report(
      `${path}.baseUrl`,
      `mode ${mode} needs baseUrl, an http(s) URL such as https://api.example.com`,
    );
  } else {
    try {
      const url = new URL(upstream.baseUrl);
      if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
        report(
          `${path}.baseUrl`,
          'baseUrl takes no query, fragment or user info; put credentials in credentials.headers',
        );
      }
    } catch {
      report(`${path}.baseUrl`, `${JSON.stringify(upstream.baseUrl)} is not a URL`);
    }
  }
  if (mode === 'replay' && upstream.replayCases === undefined) {
    report(
      `${path}.replayCases`,
      'replay mode needs replayCases: a file written by `sideguard record`',
    );
  }
  const mount = upstream.mount;
  if ('prefix' in mount) {
    const split = splitPath(mount.prefix);
    if (split.kind === 'invalid' || split.segments.length === 0 || mount.prefix.endsWith('/')) {
      report(
        `${path}.mount.prefix`,
        'a prefix is a path such as "/crm": starts with /, no trailing /',
      );
      return;
    }
    if (RESERVED_PREFIXES.includes(split.segments[0] ?? '')) {
      report(
        `${path}.mount.prefix`,
        `/${split.segments[0]} is reserved by the gateway; pick another prefix`,
      );
    }
    const clash = prefixes.find(
      (other) =>
        other.segments.every((part, i) => split.segments[i] === part) ||
        split.segments.every((part, i) => other.segments[i] === part),
    );
    if (clash !== undefined) {
      report(
        `${path}.mount.prefix`,
        `${mount.prefix} overlaps the prefix of upstream "${clash.name}"; prefixes must not contain each other`,
      );
    }
    prefixes.push({ name, segments: split.segments });
  } else {
    if (mount.port < 0 || mount.port > 65_535) {
      report(`${path}.mount.port`, 'a port is an integer from 0 to 65535');
    }
    const other = ports.get(mount.port);
    if (mount.port !== 0 && other !== undefined) {
      report(`${path}.mount.port`, `port ${mount.port} is already the port of upstream "${other}"`);
    }
    ports.set(mount.port, name);
  }
}

function resolveAction(
  reference: ActionDefinition | string,
  actions: ReadonlyMap<string, ActionDefinition>,
): ActionDefinition | undefined {
  if (typeof reference === 'string') return actions.get(reference);
  return actions.get(reference.typeName) === reference ? reference : undefined;
}

/** What compiling the bindings builds up, shared by the per-binding steps. */
interface BindingIndex {
  readonly httpBindings: Map<string, CompiledHttpBinding[]>;
  readonly toolBindings: Map<string, Map<string, CompiledToolBinding>>;
  /** Binding name → its index. */
  readonly names: Map<string, number>;
  /** `upstream shape` → index of the binding that owns the route. */
  readonly shapes: Map<string, number>;
}

function compileBindings(
  config: GatewayConfig,
  upstreams: ReadonlyMap<string, CompiledUpstream>,
  actions: ReadonlyMap<string, ActionDefinition>,
  report: Report,
): BindingIndex {
  const index: BindingIndex = {
    httpBindings: new Map(),
    toolBindings: new Map(),
    names: new Map(),
    shapes: new Map(),
  };
  config.bindings.forEach((binding: BindingConfig, position) => {
    const path = `bindings[${position}]`;
    const earlier = index.names.get(binding.name);
    if (!BINDING_NAME.test(binding.name)) {
      report(`${path}.name`, 'binding names are letters, digits, ".", "_" and "-" (at most 64)');
    } else if (earlier !== undefined) {
      report(
        `${path}.name`,
        `"${binding.name}" is also the name of bindings[${earlier}]; names must be unique`,
      );
    }
    index.names.set(binding.name, position);
    const upstream = upstreams.get(binding.upstream);
    if (upstream === undefined) {
      report(
        `${path}.upstream`,
        `no upstream "${binding.upstream}" (known: ${[...upstreams.keys()].join(', ') || 'none'})`,
      );
      return;
    }
    const reference = 'action' in binding ? binding.action : undefined;
    const action = reference === undefined ? undefined : resolveAction(reference, actions);
    if (reference !== undefined && action === undefined) {
      const label = typeof reference === 'string' ? reference : reference.typeName;
      report(`${path}.action`, `action ${label} is not in actions; add it to actions`);
    }
    if (binding.tool !== undefined) {
      indexToolBinding(
        index,
        compileToolBinding(path, binding, upstream, action, report),
        path,
        report,
      );
    } else if (upstream.kind !== 'http') {
      report(
        `${path}.route`,
        `upstream "${upstream.name}" is an MCP server: bind its tools with tool, not route`,
      );
    } else {
      indexHttpBinding(index, { path, position, binding, upstream: upstream.name, action }, report);
    }
  });
  for (const list of index.httpBindings.values()) {
    list.sort((a, b) => compareSpecificity(a.pattern, b.pattern));
  }
  return index;
}

function indexToolBinding(
  index: BindingIndex,
  compiled: CompiledToolBinding | undefined,
  path: string,
  report: Report,
): void {
  if (compiled === undefined) return;
  const tools = index.toolBindings.get(compiled.upstream) ?? new Map<string, CompiledToolBinding>();
  if (tools.has(compiled.tool)) {
    report(
      `${path}.tool`,
      `tool "${compiled.tool}" of upstream "${compiled.upstream}" is bound twice; bind it once`,
    );
  }
  tools.set(compiled.tool, compiled);
  index.toolBindings.set(compiled.upstream, tools);
}

function indexHttpBinding(
  index: BindingIndex,
  entry: {
    readonly path: string;
    readonly position: number;
    readonly binding: HttpReadBindingConfig | HttpWriteBindingConfig;
    readonly upstream: string;
    readonly action: ActionDefinition | undefined;
  },
  report: Report,
): void {
  const { path, binding, upstream } = entry;
  const pattern = checkRoute(path, binding.route, binding.read === true, report);
  if (pattern === undefined) return;
  const key = `${upstream} ${pattern.shape}`;
  const first = index.shapes.get(key);
  if (first !== undefined) {
    report(
      `${path}.route`,
      `${binding.route} on upstream "${upstream}" is bound twice (also bindings[${first}]); bind each route once`,
    );
    return;
  }
  index.shapes.set(key, entry.position);
  const list = index.httpBindings.get(upstream) ?? [];
  list.push({
    kind: 'http',
    name: binding.name,
    upstream,
    pattern,
    access: binding.read === true ? 'read' : 'write',
    action: entry.action,
    config: binding,
  });
  index.httpBindings.set(upstream, list);
}

function checkRoute(
  path: string,
  route: string,
  read: boolean,
  report: Report,
): RoutePattern | undefined {
  const parsed = parseRoute(route);
  if (parsed.kind === 'invalid') {
    report(`${path}.route`, `${JSON.stringify(route)}: ${parsed.message}`);
    return undefined;
  }
  const readMethod = isReadMethod(parsed.pattern.method);
  if (read && !readMethod) {
    report(
      `${path}.route`,
      `${route} is declared read: true but ${parsed.pattern.method} is a write; bind it to an action`,
    );
    return undefined;
  }
  if (!read && readMethod) {
    report(
      `${path}.route`,
      `${route} is bound to an action but ${parsed.pattern.method} is a read; declare it with read: true`,
    );
    return undefined;
  }
  return parsed.pattern;
}

function compileToolBinding(
  path: string,
  binding: McpToolBindingConfig,
  upstream: CompiledUpstream,
  action: ActionDefinition | undefined,
  report: Report,
): CompiledToolBinding | undefined {
  if (upstream.kind !== 'mcp') {
    report(
      `${path}.tool`,
      `upstream "${upstream.name}" is an HTTP API: bind its routes with route, not tool`,
    );
    return undefined;
  }
  if (!TOOL_DIGEST.test(binding.toolDigest)) {
    report(
      `${path}.toolDigest`,
      'write sha256:<64 hex digits>; `sideguard config check` prints the current digest of each tool',
    );
  }
  if ((binding.read === true) === (binding.action !== undefined)) {
    report(path, 'a tool binding needs exactly one of read: true and action');
    return undefined;
  }
  return {
    kind: 'tool',
    name: binding.name,
    upstream: upstream.name,
    tool: binding.tool,
    toolDigest: binding.toolDigest,
    access: binding.read === true ? 'read' : 'write',
    action,
    config: binding,
  };
}

function compileRoles(
  config: GatewayConfig,
  upstreams: ReadonlyMap<string, CompiledUpstream>,
  actions: ReadonlyMap<string, ActionDefinition>,
  names: ReadonlyMap<string, number>,
  report: Report,
): Map<string, readonly string[]> {
  const roles = new Map<string, readonly string[]>();
  for (const [role, grant] of Object.entries(config.roles)) {
    grant.bindings.forEach((entry, index) => {
      const known =
        entry === '*' ||
        names.has(entry) ||
        (entry.endsWith(':*') && upstreams.has(entry.slice(0, -2))) ||
        (entry.startsWith('action:') && actions.has(entry.slice('action:'.length)));
      if (!known) {
        report(
          `roles.${role}.bindings[${index}]`,
          `"${entry}" names no binding; use a binding name, "UPSTREAM:*", "action:namespace.name@version" or "*"`,
        );
      }
    });
    roles.set(role, [...grant.bindings]);
  }
  return roles;
}

function compileAgents(
  config: GatewayConfig,
  roles: ReadonlyMap<string, readonly string[]>,
  report: Report,
): CompiledAgent[] {
  const agents: CompiledAgent[] = [];
  const ids = new Set<string>();
  const digests = new Map<string, string>();
  config.agents.forEach((agent, index) => {
    const path = `agents[${index}]`;
    if (ids.has(agent.id)) report(`${path}.id`, `agent id "${agent.id}" is used twice`);
    ids.add(agent.id);
    let digest: Uint8Array | undefined;
    if ((agent.key === undefined) === (agent.keySha256 === undefined)) {
      report(path, 'give exactly one of key (e.g. from the environment) and keySha256');
    } else if (agent.keySha256 !== undefined) {
      if (SHA256_HEX.test(agent.keySha256.toLowerCase())) {
        digest = Buffer.from(agent.keySha256.toLowerCase(), 'hex');
      } else {
        report(
          `${path}.keySha256`,
          'write the SHA-256 of the key as 64 hex digits (`printf %s KEY | sha256sum`)',
        );
      }
    } else if (agent.key !== undefined && agent.key.length < 16) {
      report(
        `${path}.key`,
        'an agent key must be at least 16 characters (is the environment variable set?)',
      );
    } else if (agent.key !== undefined) {
      digest = hashAgentKey(agent.key);
    }
    if (digest !== undefined) {
      const hex = Buffer.from(digest).toString('hex');
      const other = digests.get(hex);
      if (other !== undefined)
        report(
          path,
          `agent "${agent.id}" has the same key as agent "${other}"; give each agent its own key`,
        );
      digests.set(hex, agent.id);
    }
    agent.roles.forEach((role, roleIndex) => {
      if (!roles.has(role)) report(`${path}.roles[${roleIndex}]`, `no role "${role}" in roles`);
    });
    agents.push({
      id: agent.id,
      principal: agent.principal,
      keySha256: digest ?? new Uint8Array(32),
      roles: [...agent.roles],
      tenant: agent.tenant ?? config.tenant ?? 'default',
    });
  });
  return agents;
}

function compileDenyRules(
  config: GatewayConfig,
  upstreams: ReadonlyMap<string, CompiledUpstream>,
  report: Report,
): CompiledDenyRule[] {
  return (config.deny ?? []).map((rule, index) => {
    const path = `deny[${index}]`;
    if (!upstreams.has(rule.upstream)) report(`${path}.upstream`, `no upstream "${rule.upstream}"`);
    let prefix: readonly string[] | undefined;
    if (rule.pathPrefix !== undefined) {
      const split = splitPath(rule.pathPrefix);
      if (split.kind === 'invalid') report(`${path}.pathPrefix`, `${split.message}`);
      else prefix = split.segments;
    }
    if (rule.pathPrefix === undefined && rule.tool === undefined && rule.method === undefined) {
      report(
        path,
        'a deny rule needs pathPrefix, method or tool (to refuse a whole upstream, remove its bindings)',
      );
    }
    return {
      upstream: rule.upstream,
      method: rule.method?.toUpperCase(),
      prefix,
      tool: rule.tool,
      reason: rule.reason ?? 'a deny rule matches',
    };
  });
}

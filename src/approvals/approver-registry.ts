/**
 * The approver registry: the people who may log in to approve or resolve (declared in the config's
 * `approvers`), each with a secret stored only as a hash. Authentication decides the channel
 * assurance their evidence carries — never the request.
 */
import type { ChannelAssurance } from '../core/vocabulary.js';
import { ApprovalsError } from './approvals-errors.js';
import {
  hashApproverSecret,
  parseApproverSecretHash,
  verifyApproverSecret,
} from './approver-secret.js';

/** One person who may log in (config `approvers[]`). */
export interface ApproverConfig {
  /**
   * The id actions declare: an authority of an approval rule (`approvals.mOfN(2, ['finance-a',
   * …])`), an operator (`operators`), or both.
   */
  readonly id: string;
  /** The `scrypt$…` line `hashApproverSecret` (or `sideguard approvers hash`) printed. */
  readonly secretHash: string;
  /**
   * The channel assurance a secret login gives this person's evidence (an authority may require
   * `high`). Declared here by whoever runs Sideguard, never taken from a request. @default 'medium'
   */
  readonly assurance?: ChannelAssurance;
  /** The tenants whose proposals this person sees. @default the config's tenant */
  readonly tenants?: readonly string[];
}

/** How a person authenticated, for the evidence and the ledger. */
export type ApproverChannel = 'console' | 'cli' | 'mcp';

/** A person the registry authenticated. Only the registry creates these. */
export interface AuthenticatedApprover {
  readonly id: string;
  readonly tenants: readonly string[];
  /** From the registry, by how the person authenticated. */
  readonly channelAssurance: ChannelAssurance;
  readonly channel: ApproverChannel;
}

/** Checks approver credentials. */
export interface ApproverRegistry {
  /** The declared ids, sorted. */
  readonly ids: readonly string[];
  /**
   * The approver when `secret` is theirs. A wrong secret and an unknown id take the same time
   * and fail the same way: `ApprovalsError` `authentication_failed`.
   */
  authenticate(
    id: string,
    secret: string,
    channel: ApproverChannel,
  ): Promise<AuthenticatedApprover>;
  /** The approver for an id already authenticated (e.g. from a console session), or undefined. */
  lookup(id: string, channel: ApproverChannel): AuthenticatedApprover | undefined;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/;

/** Problems with a list of approvers, each with where and what to change. */
export function checkApprovers(
  approvers: readonly ApproverConfig[],
): readonly { readonly path: string; readonly message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const seen = new Set<string>();
  approvers.forEach((approver, index) => {
    if (!ID_PATTERN.test(approver.id)) {
      problems.push({
        path: `approvers[${index}].id`,
        message: 'must be 1-128 letters, digits or . _ @ : - (the id the actions declare)',
      });
    }
    if (seen.has(approver.id)) {
      problems.push({
        path: `approvers[${index}].id`,
        message: `${approver.id} is declared twice`,
      });
    }
    seen.add(approver.id);
    if (parseApproverSecretHash(approver.secretHash) === undefined) {
      problems.push({
        path: `approvers[${index}].secretHash`,
        message:
          'must be a scrypt$… line from `sideguard approvers hash` (never the secret itself)',
      });
    }
  });
  return problems;
}

/** Creates the registry. @throws ApprovalsError `invalid_request` for a malformed list. */
export function createApproverRegistry(
  approvers: readonly ApproverConfig[],
  options: { readonly defaultTenant?: string } = {},
): ApproverRegistry {
  const problems = checkApprovers(approvers);
  if (problems.length > 0) {
    throw new ApprovalsError(
      'invalid_request',
      `Invalid approvers: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    );
  }
  const byId = new Map(approvers.map((approver) => [approver.id, approver]));
  // An unknown id is checked against this, so it costs the same as a wrong secret.
  const decoy = hashApproverSecret('decoy-secret-never-matches', { cost: 16_384 });
  const toApprover = (config: ApproverConfig, channel: ApproverChannel): AuthenticatedApprover => ({
    id: config.id,
    tenants: [...(config.tenants ?? [options.defaultTenant ?? 'default'])],
    channelAssurance: config.assurance ?? 'medium',
    channel,
  });
  return {
    ids: [...byId.keys()].sort(),
    async authenticate(id, secret, channel) {
      const config = typeof id === 'string' ? byId.get(id) : undefined;
      const line = config?.secretHash ?? (await decoy);
      const matches = await verifyApproverSecret(typeof secret === 'string' ? secret : '', line);
      if (config === undefined || !matches) {
        throw new ApprovalsError(
          'authentication_failed',
          'Unknown approver or wrong secret; check both (the secret is the one your administrator hashed into the config)',
        );
      }
      return toApprover(config, channel);
    },
    lookup(id, channel) {
      const config = byId.get(id);
      return config === undefined ? undefined : toApprover(config, channel);
    },
  };
}

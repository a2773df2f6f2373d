/**
 * The shape of a scenario report (`reports/NAME.json`): everything in it is computed from the
 * exported ledger and the sandbox export on disk, never from in-memory results of the run.
 */

/** The invariants of DESIGN.md. */
export const InvariantId = {
  I1: 'I1',
  I2: 'I2',
  I3: 'I3',
  I4: 'I4',
  I5: 'I5',
  I6: 'I6',
  I7: 'I7',
  I8: 'I8',
  I9: 'I9',
} as const;
export type InvariantId = (typeof InvariantId)[keyof typeof InvariantId];

/** Short names, as DESIGN.md gives them. */
export const INVARIANT_NAMES: Readonly<Record<InvariantId, string>> = {
  I1: 'once',
  I2: 'authority first',
  I3: 'evidence',
  I4: 'dry run is dry',
  I5: 'no blind resend',
  I6: 'no silent partial failure',
  I7: 'tamper-evident ledger',
  I8: 'private stays private',
  I9: 'bound authority',
};

/** One invariant's verdict and the evidence it rests on (one or two sentences, with numbers). */
export interface InvariantVerdict {
  readonly id: InvariantId;
  readonly name: string;
  readonly verdict: 'pass' | 'fail' | 'not_applicable';
  readonly evidence: string;
}

/** One expectation of the scenario's fixture, checked against the evidence. */
export interface ExpectationCheck {
  readonly name: string;
  readonly expected: string;
  readonly observed: string;
  readonly passed: boolean;
}

/** A provider write as the sandbox recorded it. */
export interface ReportReceipt {
  readonly id: string;
  readonly provider: string;
  readonly operation: string;
  /** The semantic effect key the write carried, if any. */
  readonly effect: string | null;
  readonly amountMinor: number | null;
  /** ISO-8601. */
  readonly createdAt: string;
  /** Whether the ledger claims this receipt (committed, verification_observed, …). */
  readonly inLedger: boolean;
}

/** One proposal of the scenario, replayed from the ledger. */
export interface ReportProposal {
  readonly proposal: string;
  readonly actionType: string | null;
  readonly status: string | null;
  readonly semanticEffectKey: string | null;
  readonly decisionPath: readonly string[];
}

/** One point on the scenario's timeline. */
export interface TimelineEntry {
  /** ISO-8601. */
  readonly at: string;
  readonly source: 'ledger' | 'sandbox';
  /** Ledger sequence, for ledger entries. */
  readonly sequence: number | null;
  readonly proposal: string | null;
  /** Ledger event type, or for the sandbox `write:<operation>` / `fault:<kind>` / `request`. */
  readonly type: string;
  readonly status: string | null;
  /** A short human-readable detail (reason code, receipt id, write outcome). */
  readonly detail: string;
}

/** A scenario's report. Field names in snake_case are the ones the issue names. */
export interface ScenarioReport {
  readonly schema: 'sideguard.scenario-report/v1';
  readonly scenario: string;
  readonly description: string;
  /** What the evidence says happened, e.g. `committed`, `retry_resolved`, `blocked`. */
  readonly label: string;
  readonly expected_label: string;
  readonly passed: boolean;
  /** Final status of the scenario's primary proposal, from the ledger. */
  readonly action_status: string | null;
  /** Writes the sandbox observed for the scenario's semantic effect(s). */
  readonly external_write_count: number;
  readonly duplicate_prevented: boolean;
  readonly unsafe_action_blocked: boolean;
  readonly compensation_required: boolean;
  /** The primary proposal's decision path (ledger event types in order). */
  readonly decision_path: readonly string[];
  readonly proposals: readonly ReportProposal[];
  readonly receipts: readonly ReportReceipt[];
  readonly invariants: readonly InvariantVerdict[];
  readonly expectations: readonly ExpectationCheck[];
  /**
   * In causal order: the ledger's sequence, each provider write right after the commit_started
   * whose idempotency key it carried, other provider requests placed by time. Renderers keep it.
   */
  readonly timeline: readonly TimelineEntry[];
  readonly ledger: {
    readonly entries: number;
    readonly chain: 'valid' | 'invalid';
    readonly detail: string;
  };
  /** Paths relative to the output directory. */
  readonly artifacts: { readonly ledger: string; readonly sandbox: string };
}

/** The gate's summary (`reports/gate.json`). */
export interface GateSummary {
  readonly schema: 'sideguard.gate/v1';
  readonly passed: boolean;
  readonly scenarios: readonly {
    readonly scenario: string;
    readonly label: string;
    readonly writes: number;
    readonly passed: boolean;
    /** Failed invariants and expectations, e.g. `I1`, `expectation:status`. */
    readonly failures: readonly string[];
  }[];
  /** Wall time of the whole gate run, in milliseconds. */
  readonly durationMs: number;
  readonly store: string;
}

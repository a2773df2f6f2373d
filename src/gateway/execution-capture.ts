/**
 * What an executor saw, handed to the guarded call that ran it: the upstream's answer to a write
 * this process sent (including a refusal, which the guard does not keep). Keyed by proposal;
 * bounded so an execution nobody collects cannot grow it without limit.
 */
import type { JsonValue } from '../core/canonical-json.js';

/** The most entries kept; the oldest is dropped beyond it. */
export const MAX_CAPTURED_EXECUTIONS = 4_096;

/** The answer one execution received, in the door's output format. */
export interface CapturedExecution {
  readonly output: JsonValue | undefined;
}

/** Executors record; the guarded call that executed takes. */
export interface ExecutionCapture {
  record(proposal: string, captured: CapturedExecution): void;
  take(proposal: string): CapturedExecution | undefined;
}

/** A capture for one gateway process. */
export function createExecutionCapture(): ExecutionCapture {
  const entries = new Map<string, CapturedExecution>();
  return {
    record(proposal, captured) {
      entries.delete(proposal);
      entries.set(proposal, captured);
      if (entries.size > MAX_CAPTURED_EXECUTIONS) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
    },
    take(proposal) {
      const captured = entries.get(proposal);
      entries.delete(proposal);
      return captured;
    },
  };
}

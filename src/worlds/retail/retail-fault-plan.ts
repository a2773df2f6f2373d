/**
 * The seeded fault plan of one task: every write operation of the retail provider may lose its
 * response after writing, hang past the client's timeout after writing, or fail before writing.
 * Each task draws its own schedule from (seed, task index), so tasks are not hit alike.
 */
import type { FaultPlan } from '../../sandbox/fault-plan.js';
import { retailWriteTools } from '../../sandbox/providers/retail/retail-provider.js';

/** How likely each fault is per write request. */
export const retailFaultProbabilities = {
  drop_after_write: 0.12,
  hang_after_write: 0.12,
  error_before_write: 0.12,
} as const;

/** The sandbox's hang: past the gateway's upstream timeout, then the connection is destroyed. */
export const RETAIL_HANG_MS = 1_500;

/** A 32-bit seed for one task, mixed from the run's seed and the task index. */
export function taskFaultSeed(seed: number, taskIndex: number): number {
  let value = (seed ^ Math.imul(taskIndex + 1, 0x9e3779b1)) >>> 0;
  value = Math.imul(value ^ (value >>> 16), 0x85ebca6b) >>> 0;
  value = Math.imul(value ^ (value >>> 13), 0xc2b2ae35) >>> 0;
  return (value ^ (value >>> 16)) >>> 0;
}

/** The fault plan of task `taskIndex` under run seed `seed`. */
export function retailFaultPlan(seed: number, taskIndex: number): FaultPlan {
  return {
    version: 1,
    seed: taskFaultSeed(seed, taskIndex),
    rules: retailWriteTools.flatMap((operation) => [
      {
        provider: 'retail',
        operation,
        probability: retailFaultProbabilities.drop_after_write,
        fault: { kind: 'drop_after_write' as const },
      },
      {
        provider: 'retail',
        operation,
        probability: retailFaultProbabilities.hang_after_write,
        fault: { kind: 'hang_after_write' as const, hangMs: RETAIL_HANG_MS },
      },
      {
        provider: 'retail',
        operation,
        probability: retailFaultProbabilities.error_before_write,
        fault: { kind: 'error_before_write' as const },
      },
    ]),
  };
}

import { describe, expect, it } from 'vitest';
import { decideFault, faultSchedule, parseFaultPlan, parseFaultPlanJson } from './fault-plan.js';
import { SandboxConfigError } from './sandbox-errors.js';

describe('fault plans', () => {
  it('lets the first matching rule win, by provider, operation and request index', () => {
    const plan = parseFaultPlan({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [0, 2],
          fault: { kind: 'drop_after_write' },
        },
        {
          provider: '*',
          operation: '*',
          requests: [2],
          fault: { kind: 'rate_limit', retryAfterSeconds: 2 },
        },
      ],
    });
    expect(faultSchedule(plan, 1, 'payments', 'create_refund', 4)).toEqual([
      'drop_after_write',
      null,
      'drop_after_write',
      null,
    ]);
    expect(faultSchedule(plan, 1, 'crm', 'update_ticket', 3)).toEqual([null, null, 'rate_limit']);
    expect(decideFault(plan, 1, 'crm', 'update_ticket', 2)).toEqual({
      fault: { kind: 'rate_limit', retryAfterSeconds: 2 },
      ruleIndex: 1,
    });
  });

  it('draws probabilistic faults from the plan seed when given, else the sandbox seed', () => {
    const withSeed = parseFaultPlan({
      version: 1,
      seed: 5,
      rules: [{ provider: '*', operation: '*', probability: 0.5, fault: { kind: 'hold' } }],
    });
    expect(faultSchedule(withSeed, 1, 'p', 'o', 50)).toEqual(
      faultSchedule(withSeed, 2, 'p', 'o', 50),
    );
    const withoutSeed = parseFaultPlan({
      version: 1,
      rules: [{ provider: '*', operation: '*', probability: 0.5, fault: { kind: 'hold' } }],
    });
    expect(faultSchedule(withoutSeed, 1, 'p', 'o', 50)).not.toEqual(
      faultSchedule(withoutSeed, 2, 'p', 'o', 50),
    );
    expect(faultSchedule(withoutSeed, 1, 'p', 'o', 50)).toEqual(
      faultSchedule(withoutSeed, 1, 'p', 'o', 50),
    );
  });

  it('rejects unknown fields, bad kinds and bad JSON with the field path in the message', () => {
    const cases: [unknown, RegExp][] = [
      [
        {
          version: 1,
          rules: [{ provider: 'p', operation: 'o', fault: { kind: 'hold', extra: 1 } }],
        },
        /rules\[0\]\.fault/,
      ],
      [
        { version: 1, rules: [{ provider: 'p', operation: 'o', fault: { kind: 'explode' } }] },
        /rules\[0\]\.fault\.kind/,
      ],
      [
        {
          version: 1,
          rules: [{ provider: 'p', operation: 'o', requests: [-1], fault: { kind: 'hold' } }],
        },
        /rules\[0\]\.requests\[0\]/,
      ],
      [
        {
          version: 1,
          rules: [{ provider: 'p', operation: 'o', probability: 2, fault: { kind: 'hold' } }],
        },
        /rules\[0\]\.probability/,
      ],
      [{ rules: [] }, /version/],
    ];
    for (const [input, message] of cases) {
      expect(() => parseFaultPlan(input)).toThrow(message);
    }
    expect(() => parseFaultPlanJson('{nope')).toThrow(SandboxConfigError);
    expect(() => parseFaultPlanJson('{nope')).toThrow(/not JSON/);
  });
});

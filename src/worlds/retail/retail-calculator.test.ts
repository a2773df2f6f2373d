import { describe, expect, it } from 'vitest';
import { calculate } from './retail-calculator.js';

describe('calculate (the benchmark tool)', () => {
  it.each([
    ['652.61 - 642.72', '9.89'],
    ['164.28', '164.28'],
    ['2 + 2', '4.0'],
    ['200.8 + 96.35 + 193.38 + 231.37 + 196.53', '918.43'],
    ['10 / 4', '2.5'],
    ['-3 * (2 + 1.5)', '-10.5'],
    ['7 // 2', '3.0'],
    ['2 ** 10', '1024.0'],
    ['0.1 + 0.2', '0.3'],
  ])('%s answers %s, as Python str(round(float(eval(x)), 2)) does', (expression, answer) => {
    expect(calculate(expression)).toBe(answer);
  });

  it('refuses other characters and reports errors as the benchmark does', () => {
    expect(calculate('__import__("os")')).toBe('Error: invalid characters in expression');
    expect(calculate('1 / 0')).toBe('Error: division by zero');
    expect(calculate('(1 + 2')).toMatch(/^Error: /);
  });
});

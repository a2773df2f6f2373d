/**
 * Python's `round(x, 2)` for floats, which the τ-bench retail tools use on dollar amounts.
 * Python rounds the exact binary value of `x` to the nearest multiple of 0.01 and breaks exact
 * ties to even; `Math.round(x * 100) / 100` rounds a product that may already be off by one ulp,
 * and breaks ties upwards, so the two differ on values such as 1.005, 0.125 or 2.675.
 */

/**
 * `round(x, 2)` as CPython computes it for a float: the exact value of `x` rounded half-to-even
 * to two decimals, returned as the nearest double. Finite inputs below 1e21 in magnitude only
 * (dollar amounts); anything else is returned unchanged, as Python does for infinities.
 */
export function pyRound2(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x;
  // toFixed rounds the exact binary value (ECMA-262 Number.prototype.toFixed); only an exact
  // tie — x*100 exactly k + 0.5 — needs Python's half-to-even instead of half-away-from-zero.
  if (isExactHalfCent(x)) {
    const scaled = x * 100; // exact: x is a multiple of 1/8 well within 2^53 / 100
    const floor = Math.floor(scaled);
    const even = floor % 2 === 0 ? floor : floor + 1;
    return even / 100 === 0 ? 0 * Math.sign(x) : even / 100;
  }
  const rounded = Number(x.toFixed(2));
  return rounded === 0 ? 0 * Math.sign(x) : rounded;
}

/**
 * True when the exact value of `x` lies halfway between two cents. Such an `x` is k/200 for an
 * odd k, and being a binary fraction it must be a multiple of 1/8 (200 = 8 · 25).
 */
function isExactHalfCent(x: number): boolean {
  if (Math.abs(x) >= 2 ** 49) return false; // integers there: never a half cent
  const eighths = x * 8; // exact for |x| < 2^50
  if (!Number.isInteger(eighths)) return false;
  const scaled = x * 100; // exact: an integer number of eighths times 100 fits in 53 bits
  return Math.abs(scaled - Math.trunc(scaled)) === 0.5;
}

/**
 * Python's `repr` of a float, for answers the benchmark prints with `str(float)`: whole values
 * keep `.0` (`4.0`), and magnitudes from 1e16 use an exponent (`1e+16`), as CPython does.
 */
export function pyFloatString(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Object.is(x, -0)) return '-0.0';
  const magnitude = Math.abs(x);
  if (magnitude >= 1e16 || (magnitude !== 0 && magnitude < 1e-4)) {
    const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
    const power = Number(exponent);
    const sign = power < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(power)).padStart(2, '0')}`;
  }
  const text = String(x);
  return Number.isInteger(x) ? `${text}.0` : text;
}

/**
 * The choice tape: every decision of a schedule is one integer drawn here, so a seed (or a
 * recorded tape) replays a schedule exactly, and shrinking works on the recorded integers.
 * Zero is always the simplest choice (no fault, the oldest operation, the fewest actors).
 */

/**
 * A small, fast, seedable generator (sfc32); never `Math.random`. The state is kept as signed
 * 32-bit integers (`| 0`), which V8 stores unboxed; as unsigned ones (`>>> 0`) every value at or
 * above 2^31 was a new heap number, several per draw. The arithmetic is modulo 2^32 either way,
 * so the draws are the same (tested against the unsigned form).
 */
export function createSeededGenerator(seed: number): () => number {
  let a = 0x9e3779b9 | 0;
  let b = 0x243f6a88 | 0;
  let c = 0xb7e15162 | 0;
  let d = seed | 0;
  const next = (): number => {
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let index = 0; index < 12; index++) next();
  return next;
}

/** The largest bound one choice may have. */
export const MAX_CHOICE_BOUND = 0x7fffffff;

/** Draws choices from a seed, or replays recorded ones, and records what it drew. */
export class ChoiceTape {
  readonly #replay: readonly number[] | undefined;
  readonly #generator: (() => number) | undefined;
  readonly #recorded: number[] = [];

  private constructor(source: { seed: number } | { choices: readonly number[] }) {
    if ('seed' in source) this.#generator = createSeededGenerator(source.seed);
    else this.#replay = source.choices;
  }

  /** A fresh tape drawn from `seed`. */
  static fromSeed(seed: number): ChoiceTape {
    return new ChoiceTape({ seed });
  }

  /** Replays recorded choices; past their end every choice is 0 (the simplest). */
  static fromChoices(choices: readonly number[]): ChoiceTape {
    return new ChoiceTape({ choices });
  }

  /** An integer in [0, bound). A bound of 1 draws nothing and records nothing. */
  choose(bound: number): number {
    if (bound <= 1) return 0;
    let value: number;
    if (this.#replay !== undefined) {
      const recorded = this.#replay[this.#recorded.length] ?? 0;
      value = recorded < bound ? recorded : recorded % bound;
    } else {
      value = (this.#generator as () => number)() % bound;
    }
    this.#recorded.push(value);
    return value;
  }

  /**
   * The index of a bucket, drawn with the given integer weights; bucket 0 is the simplest, and
   * lowering the recorded number never moves to a later bucket.
   */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const weight of weights) total += weight;
    let value = this.choose(total);
    for (let index = 0; index < weights.length; index++) {
      value -= weights[index] as number;
      if (value < 0) return index;
    }
    return weights.length - 1;
  }

  /** An integer in [min, max], biased toward nothing: uniform. */
  between(min: number, max: number): number {
    return min + this.choose(max - min + 1);
  }

  /** True with probability `percent`/100; false is the simplest. */
  chance(percent: number): boolean {
    // `weighted([100 - percent, percent]) === 1` without building the array on every call: the
    // same draw (a choice below 100) and the same answer.
    if (!(percent > 0 && percent <= 100 && Number.isInteger(percent)))
      return this.weighted([100 - percent, percent]) === 1;
    return this.choose(100) >= 100 - percent;
  }

  /** Everything drawn so far. */
  get choices(): readonly number[] {
    return this.#recorded;
  }

  /** How many choices were drawn. */
  get length(): number {
    return this.#recorded.length;
  }
}

import { describe, expect, it } from 'vitest';
import { ChoiceTape, createSeededGenerator } from './choice-tape.js';

/** sfc32 as first written, with its state as unsigned 32-bit integers: the reference. */
function referenceGenerator(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
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

describe('createSeededGenerator', () => {
  it('draws what the unsigned reference draws, for seeds across the 32-bit range and beyond', () => {
    for (const seed of [0, 1, 42, 0x5eed, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32 + 5, -7]) {
      const generator = createSeededGenerator(seed);
      const reference = referenceGenerator(seed);
      for (let draw = 0; draw < 20_000; draw++) expect(generator()).toBe(reference());
    }
  });

  it('draws unsigned 32-bit integers, both halves of the range', () => {
    const generator = createSeededGenerator(7);
    const draws = Array.from({ length: 1_000 }, () => generator());
    expect(draws.every((value) => Number.isInteger(value) && value >= 0 && value < 2 ** 32)).toBe(
      true,
    );
    expect(draws.some((value) => value >= 2 ** 31)).toBe(true);
    expect(draws.some((value) => value < 2 ** 31)).toBe(true);
  });
});

describe('ChoiceTape', () => {
  it('replays what a seed drew', () => {
    const drawn = ChoiceTape.fromSeed(99);
    const firsts = [drawn.choose(10), drawn.weighted([5, 1, 3]), drawn.between(3, 9)];
    const replayed = ChoiceTape.fromChoices(drawn.choices);
    expect([replayed.choose(10), replayed.weighted([5, 1, 3]), replayed.between(3, 9)]).toEqual(
      firsts,
    );
  });
});

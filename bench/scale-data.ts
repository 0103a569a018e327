/**
 * The synthetic index of the scale bench (bench/scale.ts): names of 1–3 words and descriptions of
 * 3–8 words drawn from a vocabulary of 20,000 words with Zipf's law (s = 1), as real names are
 * skewed: the commonest word is in about 1 name in 6, most words in a handful. Deterministic: the
 * same `i` is always the same entity.
 */
import type { Shape } from "./export";

export const VOCABULARY_SIZE = 20_000;
const ONSETS = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "r", "s", "st", "t", "v", "w", "z"];
const VOWELS = ["a", "e", "i", "o", "u", "ei", "ou", "y", "ø", "é"];
const CODAS = ["", "n", "r", "s", "l", "m", "nd", "rt", "k", "sk"];

/** Word `rank` (0 is the commonest): syllables spelt from its number, two or more, some with ø or é, every one distinct. */
export function word(rank: number): string {
  let n = rank + ONSETS.length * VOWELS.length * CODAS.length;
  let out = "";
  do {
    const onset = ONSETS[n % ONSETS.length] ?? "";
    n = Math.floor(n / ONSETS.length);
    const vowel = VOWELS[n % VOWELS.length] ?? "";
    n = Math.floor(n / VOWELS.length);
    const coda = CODAS[n % CODAS.length] ?? "";
    n = Math.floor(n / CODAS.length);
    out += onset + vowel + coda;
  } while (n > 0);
  return out;
}

/** A small fast generator of numbers in [0, 1), seeded: mulberry32. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cumulative Zipf weights of the vocabulary's ranks. */
const CUMULATIVE = (() => {
  const c = new Float64Array(VOCABULARY_SIZE);
  let sum = 0;
  for (let r = 0; r < VOCABULARY_SIZE; r++) c[r] = sum += 1 / (r + 1);
  for (let r = 0; r < VOCABULARY_SIZE; r++) c[r] = (c[r] ?? 0) / sum;
  return c;
})();

/** A rank drawn by Zipf's law. */
function zipf(next: () => number): number {
  const x = next();
  let lo = 0;
  let hi = VOCABULARY_SIZE - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((CUMULATIVE[mid] ?? 1) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const words = (next: () => number, count: number) => Array.from({ length: count }, () => word(zipf(next)));

export const SKEWED: Shape = {
  name: (i) => {
    const next = random(i * 2 + 1);
    return words(next, 1 + Math.floor(next() * 3))
      .map(capital)
      .join(" ");
  },
  description: (i) => {
    const next = random(i * 2 + 2);
    return `${capital(words(next, 3 + Math.floor(next() * 6)).join(" "))}.`;
  },
};

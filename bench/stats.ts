/** The middle value; for an even count, the mean of the two middle values. NaN for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The least and the greatest value; NaN for none. */
export function spread(xs: readonly number[]): { min: number; max: number } {
  return xs.length === 0 ? { min: NaN, max: NaN } : { min: Math.min(...xs), max: Math.max(...xs) };
}

/**
 * The benchmarks' statistics: medians, and whether pion's figures are at or below the
 * reference's once the machine's noise is taken into account.
 */

export interface Stat {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median, min and max of the finite figures; undefined when there are none. */
export function stat(xs: readonly number[]): Stat | undefined {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { median, min: v[0]!, max: v[v.length - 1]!, n: v.length };
}

/** mulberry32: a small seeded generator, so the same figures always give the same interval. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The 95% interval of the ratio of medians a/b by bootstrap: each side resampled with
 * replacement, 2,000 times. Both sides need finite figures.
 */
export function ratioInterval(a: readonly number[], b: readonly number[]): { lo: number; hi: number } {
  const random = seeded(0x9e3779b9);
  const resample = (v: readonly number[]) => stat(Array.from(v, () => v[Math.floor(random() * v.length)]!))!.median;
  const ratios = Array.from({ length: 2000 }, () => resample(a) / resample(b)).sort((x, y) => x - y);
  return { lo: ratios[Math.floor(ratios.length * 0.025)]!, hi: ratios[Math.ceil(ratios.length * 0.975) - 1]! };
}

/** With fewer runs than this on a side, a median above the reference's cannot be told from noise. */
export const MIN_RUNS = 8;

/**
 * Whether pion's figures are at or below the reference's: "met" when the median is; "within
 * noise" when it is above but the 95% interval of the ratio still reaches 1 (the runs cannot
 * tell the two apart); otherwise not met.
 */
export function atMostRef(pion: readonly number[], ref: readonly number[]): string {
  const p = pion.filter(Number.isFinite);
  const r = ref.filter(Number.isFinite);
  if (p.length === 0 || r.length === 0) return "";
  if (stat(p)!.median <= stat(r)!.median) return "met";
  if (p.length < MIN_RUNS || r.length < MIN_RUNS) return `**not met** (${Math.min(p.length, r.length)} runs: too few to tell from noise)`;
  const { lo, hi } = ratioInterval(p, r);
  const ci = `95% CI ${lo.toFixed(2)}–${hi.toFixed(2)}`;
  return lo <= 1 ? `within noise (${ci})` : `**not met** (${ci})`;
}

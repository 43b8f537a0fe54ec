// Shared by the A/B tools (consume-ab.ts, produce-ab.ts).

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Per round, each tree's value over the first tree's; their median, as text. */
export function medianRatio(values: number[][], tree: number): string {
  return median(values[tree]!.map((x, r) => x / values[0]![r]!)).toFixed(2)
}

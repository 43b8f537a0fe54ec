// Property-test sizes. FC_RUNS_MULTIPLIER scales every property's runs (and the time limits that go with them) for
// a deep run, e.g. FC_RUNS_MULTIPLIER=100; the seed is shared through test/setup/fastCheck.ts.
const MULTIPLIER = Math.max(1, Number(process.env.FC_RUNS_MULTIPLIER) || 1)

/** `n` runs, times FC_RUNS_MULTIPLIER. */
export const runs = (n: number): number => Math.round(n * MULTIPLIER)

/** A time limit (ms) for a property of `runs(...)` runs, scaled with them. */
export const scaledMs = (ms: number): number => Math.round(ms * MULTIPLIER)

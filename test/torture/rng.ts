// A seeded PRNG (mulberry32): the whole run — workload, fault schedule, worker settings — is drawn from one
// printed seed, so a failing run can be repeated with `--seed`.
export interface Rng {
  /** [0, 1) */
  next(): number
  /** integer in [min, max] */
  int(min: number, max: number): number
  pick<T>(items: readonly T[]): T
  /** a copy in random order */
  shuffle<T>(items: readonly T[]): T[]
  chance(p: number): boolean
  /** a child generator with its own stream, so adding draws in one place does not shift the others */
  fork(label: string): Rng
  readonly seed: number
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const rng: Rng = {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
    shuffle: (items) => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1))
        ;[out[i], out[j]] = [out[j], out[i]]
      }
      return out
    },
    fork: (label) => createRng(hashString(`${seed}:${label}`)),
  }
  return rng
}

/** FNV-1a: a stable 32-bit number for a label */
export function hashString(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

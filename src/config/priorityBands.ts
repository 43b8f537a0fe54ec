// Weighted-fair-queuing bands over message priorities 0..9: parsing/validation plus the pure slot arithmetic
// a poll uses to split its batch budget across bands.
import { formatValue, invalid } from './env.js'
import type { PriorityBand } from './types.js'

export const MIN_PRIORITY = 0
export const MAX_PRIORITY = 9

const EXPECTED =
  'a JSON array of {"range":[min,max],"weight":w} with integer 0 <= min <= max <= 9, finite weight > 0, ' + 'covering priorities 0..9 exactly once'

/**
 * Validates bands given as JSON text (env) or an array (options). Returns fresh band objects sorted by range
 * start; the input is not modified. `source` names the variable or option path for the error message.
 */
export function parsePriorityBands(json: string | PriorityBand[], source: string): PriorityBand[] {
  const fail = (reason: string): never => invalid(source, json, `${EXPECTED} (${reason})`)

  let parsed: unknown = json
  if (typeof json === 'string') {
    try {
      parsed = JSON.parse(json)
    } catch {
      return fail('not valid JSON')
    }
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return fail('not a non-empty array')

  const bands = parsed.map((item: unknown, index): PriorityBand => {
    if (typeof item !== 'object' || item === null) return fail(`band ${index} is not an object`)
    const { range, weight } = item as { range?: unknown; weight?: unknown }
    if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n))) {
      return fail(`band ${index} range ${formatValue(range)} is not [min,max] of integers`)
    }
    const [min, max] = range as [number, number]
    if (min < MIN_PRIORITY || max > MAX_PRIORITY || min > max) {
      return fail(`band ${index} range [${min},${max}] is outside 0..9 or has min > max`)
    }
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
      return fail(`band ${index} weight ${formatValue(weight)} is not a finite number > 0`)
    }
    return { range: [min, max], weight }
  })

  bands.sort((a, b) => a.range[0] - b.range[0])
  let next = MIN_PRIORITY
  for (const { range } of bands) {
    if (range[0] > next) return fail(`gap: priorities ${next}..${range[0] - 1} are not covered`)
    if (range[0] < next) return fail(`overlap: priority ${range[0]} is covered twice`)
    next = range[1] + 1
  }
  if (next <= MAX_PRIORITY) return fail(`gap: priorities ${next}..${MAX_PRIORITY} are not covered`)
  return bands
}

/** Index of the band holding `priority` (bands as returned by parsePriorityBands). */
export function bandIndexOf(bands: readonly PriorityBand[], priority: number): number {
  return bands.findIndex(({ range }) => priority >= range[0] && priority <= range[1])
}

function assertCount(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer, got ${value}`)
}

/**
 * Initial per-band limits: floor(budget * w_i / sum(w)), then the remainder one slot at a time in order of
 * descending weight (ties: lower band index first). This is what DataHub's comment intends; its code starts at band 0.
 */
export function splitBatchAcrossBands(bands: readonly PriorityBand[], budget: number): number[] {
  assertCount(budget, 'budget')
  if (bands.length === 0) return []
  const total = bands.reduce((sum, band) => sum + band.weight, 0)
  const limits = bands.map((band) => Math.floor((budget * band.weight) / total))
  const order = bands.map((_, i) => i).sort((a, b) => bands[b]!.weight - bands[a]!.weight || a - b)
  let remainder = budget - limits.reduce((sum, n) => sum + n, 0)
  // Float rounding can leave the remainder at most bands.length, so cycle rather than assume one pass.
  for (let k = 0; remainder > 0; k = (k + 1) % order.length, remainder--) limits[order[k]!] += 1
  return limits
}

/**
 * Final per-band takes. Each band first takes min(limit, available); the slots some bands cannot use then go,
 * in band order, to any band that still has messages. Unlike DataHub (slots only flow forward and the last
 * band's are lost), the total is always min(sum(limits), sum(available)).
 */
export function redistributeUnused(limits: readonly number[], available: readonly number[]): number[] {
  if (limits.length !== available.length) {
    throw new RangeError(`limits and available differ in length (${limits.length} vs ${available.length})`)
  }
  limits.forEach((n, i) => assertCount(n, `limits[${i}]`))
  available.forEach((n, i) => assertCount(n, `available[${i}]`))

  const takes = limits.map((limit, i) => Math.min(limit, available[i]!))
  let spare = limits.reduce((sum, limit, i) => sum + limit - takes[i]!, 0)
  for (let i = 0; i < takes.length && spare > 0; i++) {
    const extra = Math.min(spare, available[i]! - takes[i]!)
    takes[i] += extra
    spare -= extra
  }
  return takes
}

import type { FetchedPartition, ReadHorizon } from '../store/fetch.js'

/**
 * A read floor of one partition: no row of a priority p with a seq above `positions[p]`, visible now or committed
 * later, has an enqueued_at before `lo` or after `hi` (microseconds since 1970). Valid for any positions at or above
 * these (per priority), so it survives rewinds and seeks that stay above them.
 */
interface Floor {
  positions: readonly bigint[]
  lo: bigint
  hi: bigint
}

/** How many floors a partition keeps: enough for its commits, which lag its fetches by a few rounds. */
const KEPT = 16

const US_PER_MS = 1000n

/**
 * The floors of one partition a member holds, recorded after fetches that drained it and looked up for each fetch
 * and commit (docs/decisions/scale-011-read-horizon.md). Why a drained fetch gives a floor: every row above the
 * positions it started from that its snapshot saw was returned (their enqueued_at range is known), and any other
 * row belongs to a transaction still open, or not begun, when `before` (a horizon read by a statement that had
 * finished before this fetch was sent) was read: its enqueued_at, that transaction's start, lies within `before`.
 */
export class ReadFloors {
  private floors: Floor[] = []

  /** The bounds for the rows above `positions`: the tightest floor recorded at or below them, else unbounded. */
  boundsFor(positions: readonly bigint[]): { floor: bigint | null; ceiling: bigint | null } {
    let best: Floor | undefined
    for (const f of this.floors) {
      if (f.positions.every((seq, p) => seq <= positions[p]) && (!best || f.lo > best.lo)) best = f
    }
    return best ? { floor: best.lo, ceiling: best.hi } : { floor: null, ceiling: null }
  }

  /**
   * After `fetched` (read with the horizon `before`) moved the positions to `positions`: a floor, when the fetch
   * drained the partition and `before` is known. Rows it returned that were not delivered stay above the positions,
   * so their enqueued_at widen it.
   */
  afterFetch(fetched: FetchedPartition, before: ReadHorizon | undefined, positions: readonly bigint[]): void {
    if (!fetched.drained || !before || before.lo === null) return
    let lo = before.lo
    let hi = before.hi
    for (const r of fetched.rows) {
      // enqueuedAtMs is rounded to the millisecond: a millisecond either side covers it
      const us = BigInt(r.enqueuedAtMs) * US_PER_MS
      if (us - US_PER_MS < lo) lo = us - US_PER_MS
      if (us + US_PER_MS > hi) hi = us + US_PER_MS
    }
    // a floor at or above these positions with a lower lo adds nothing this one does not give
    this.floors = this.floors.filter((f) => !positions.every((seq, p) => f.positions[p] >= seq && f.lo <= lo))
    this.floors.push({ positions: [...positions], lo, hi })
    if (this.floors.length > KEPT) this.floors.shift()
  }
}

import type { FetchedPartition, ReadHorizon } from '../store/fetch.js'
import type { ReadRange } from '../store/readBounds.js'

/**
 * A read floor of one partition: no row of a priority p with a seq above `positions[p]`, visible now or committed
 * later, has an enqueued_at before `lo` or after `hi` (microseconds since 1970). Valid for any positions at or above
 * these (per priority), so it survives rewinds and seeks that stay above them.
 */
interface Floor {
  positions: readonly bigint[]
  lo: bigint
  hi: bigint
  /** ServerClock.epoch when it was recorded: a floor of an earlier epoch predates a clock set back */
  epoch: number
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
  /** the positions after the last fetch that drained the partition and delivered all it returned, and its high
   * watermark (in that fetch's snapshot) */
  private drain?: { positions: readonly bigint[]; high: bigint }

  /**
   * The contiguous watermark of these processed-through positions, when the member knows it without reading the
   * log: they are where the last draining fetch left the positions, so every row its snapshot saw above them was
   * processed and every row of any priority committed since has a seq above that fetch's high watermark.
   */
  watermarkFor(resolved: readonly bigint[]): bigint | undefined {
    const d = this.drain
    if (!d || !d.positions.every((seq, p) => seq === resolved[p])) return undefined
    return d.high
  }

  /** The bounds for the rows above `positions`: the tightest floor recorded at or below them, else unbounded. */
  boundsFor(positions: readonly bigint[], epoch: number): { floor: bigint | null; ceiling: bigint | null } {
    let best: Floor | undefined
    for (const f of this.floors) {
      if (f.epoch === epoch && f.positions.every((seq, p) => seq <= positions[p]) && (!best || f.lo > best.lo)) best = f
    }
    return best ? { floor: best.lo, ceiling: best.hi } : { floor: null, ceiling: null }
  }

  /**
   * After `fetched` (read with the horizon `before`) moved the positions to `positions`: a floor, when the fetch
   * drained the partition and `before` is known. Rows it returned that were not delivered stay above the positions,
   * so their enqueued_at widen it.
   */
  afterFetch(fetched: FetchedPartition, before: ReadHorizon | undefined, positions: readonly bigint[], epoch: number): void {
    const all = fetched.rows.every((r) => BigInt(r.seq) <= positions[r.priority])
    this.drain = fetched.drained && all ? { positions: [...positions], high: BigInt(fetched.highWatermark) } : undefined
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
    this.floors = this.floors.filter((f) => f.epoch === epoch && !positions.every((seq, p) => f.positions[p] >= seq && f.lo <= lo))
    this.floors.push({ positions: [...positions], lo, hi, epoch })
    if (this.floors.length > KEPT) this.floors.shift()
  }
}

/**
 * Widens every range on both sides (5 minutes): for clock adjustments, for the instant between a writer taking its
 * start timestamp and reporting it in pg_stat_activity, and for the millisecond rounding of the rows' enqueued_at.
 * An object so that tests can narrow it (test/integration/consumer/readFloors.test.ts) to make a skipped row show.
 */
export const readSlack = { us: 300_000_000n }

/**
 * The server's clock as this member knows it: the statement_timestamp() of its last fetch and the monotonic time the
 * fetch was sent, so `estimate()` is never behind the server's clock (it runs ahead by a round trip at most), and
 * whether that clock was set back.
 */
export class ServerClock {
  private base?: { serverUs: bigint; sentAt: number }
  /** counts the times the clock was seen set back: floors and horizons of an earlier epoch are not used */
  epoch = 0

  constructor(private readonly monotonicMs: () => number = () => performance.now()) {}

  /** The time the next statement is sent, for `observe`. */
  now(): number {
    return this.monotonicMs()
  }

  /**
   * A fetch sent at `sentAt` ran at `serverUs`; false when that is behind where the server's clock must have been by
   * then (the last fetch's time plus the time passed here) by more than the slack: the clock was set back.
   */
  observe(serverUs: bigint, sentAt: number): boolean {
    const b = this.base
    const back = b !== undefined && serverUs + readSlack.us < b.serverUs + BigInt(Math.floor((sentAt - b.sentAt) * 1000))
    if (back) this.epoch++
    this.base = { serverUs, sentAt }
    return !back
  }

  /** The server's time now, or later (µs since 1970); undefined before the first fetch. */
  estimate(): bigint | undefined {
    if (!this.base) return undefined
    return this.base.serverUs + BigInt(Math.ceil((this.monotonicMs() - this.base.sentAt) * 1000))
  }
}

/**
 * The range one statement reads every partition's rows in: from the lowest floor to the latest of the ceilings and
 * the server's clock, widened by readSlack; undefined (everything) when a partition has no floor or the clock is
 * not known yet.
 */
export function rangeFor(bounds: Array<{ floor: bigint | null; ceiling: bigint | null }>, clock: ServerClock): ReadRange | undefined {
  const now = clock.estimate()
  if (now === undefined || bounds.length === 0) return undefined
  let lo: bigint | undefined
  let hi = now
  for (const b of bounds) {
    if (b.floor === null || b.ceiling === null) return undefined
    if (lo === undefined || b.floor < lo) lo = b.floor
    if (b.ceiling > hi) hi = b.ceiling
  }
  return { lo: lo! - readSlack.us, hi: hi + readSlack.us }
}

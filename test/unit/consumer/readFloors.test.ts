import { describe, expect, it } from 'vitest'
import { rangeFor, readSlack, ReadFloors, ServerClock } from '../../../src/consumer/readFloors.js'
import type { FetchedPartition, FetchedRow } from '../../../src/store/fetch.js'

const at = (positions: number[]) => positions.map(BigInt)
const five = (seq: number) => at([0, 0, 0, 0, 0, seq, 0, 0, 0, 0])

const row = (seq: number, enqueuedAtMs: number, priority = 5): FetchedRow => ({
  seq: String(seq),
  priority,
  routingKey: '',
  messageKey: null,
  flags: 0,
  payload: Buffer.alloc(1),
  compression: 0,
  headers: null,
  timestampMs: String(enqueuedAtMs),
  enqueuedAtMs: String(enqueuedAtMs),
  payloadBytes: 1,
})

const fetched = (rows: FetchedRow[], drained: boolean, high = rows.length): FetchedPartition => ({
  highWatermark: String(high),
  rows,
  drained,
  serverNow: 0n,
})

describe('ReadFloors', () => {
  it('records a floor only after a drained fetch with a known horizon, at most as new as the horizon and the rows', () => {
    const f = new ReadFloors()
    f.afterFetch(fetched([row(1, 5000)], false), { lo: 9_000_000n, hi: 9_500_000n }, five(1), 0)
    expect(f.boundsFor(five(1), 0)).toEqual({ floor: null, ceiling: null })
    f.afterFetch(fetched([row(2, 5000)], true), undefined, five(2), 0)
    expect(f.boundsFor(five(2), 0)).toEqual({ floor: null, ceiling: null })
    f.afterFetch(fetched([row(3, 5000)], true), { lo: null, hi: 9_500_000n }, five(3), 0)
    expect(f.boundsFor(five(3), 0)).toEqual({ floor: null, ceiling: null })
    // a row older than the horizon (committed before it, read by this fetch) lowers the floor
    f.afterFetch(fetched([row(4, 5000)], true), { lo: 9_000_000n, hi: 9_500_000n }, five(4), 0)
    expect(f.boundsFor(five(4), 0)).toEqual({ floor: 4_999_000n, ceiling: 9_500_000n })
  })

  it('applies a floor only at or above the positions it was recorded for, and only in its clock epoch', () => {
    const f = new ReadFloors()
    f.afterFetch(fetched([], true), { lo: 9_000_000n, hi: 9_500_000n }, five(10), 0)
    expect(f.boundsFor(five(10), 0).floor).toBe(9_000_000n)
    expect(f.boundsFor(five(12), 0).floor).toBe(9_000_000n)
    // a seek or rewind below where it was recorded: rows in between may be anywhere
    expect(f.boundsFor(five(9), 0).floor).toBeNull()
    expect(
      f.boundsFor(
        at([0, 0, 0, 0, 0, 10, 0, 0, 0, 0]).map((s, p) => (p === 0 ? -1n : s)),
        0,
      ).floor,
    ).toBeNull()
    expect(f.boundsFor(five(10), 1).floor).toBeNull()
  })

  it('knows the watermark only at exactly the positions a drained fetch that delivered everything left', () => {
    const f = new ReadFloors()
    f.afterFetch(fetched([row(7, 1), row(8, 1)], true, 9), undefined, five(8), 0)
    expect(f.watermarkFor(five(8))).toBe(9n)
    expect(f.watermarkFor(five(7))).toBeUndefined()
    // rows returned but not delivered (positions short of them): unknown
    f.afterFetch(fetched([row(9, 1), row(10, 1)], true, 10), undefined, five(9), 0)
    expect(f.watermarkFor(five(9))).toBeUndefined()
    f.afterFetch(fetched([row(11, 1)], false, 20), undefined, five(11), 0)
    expect(f.watermarkFor(five(11))).toBeUndefined()
  })
})

describe('ServerClock and rangeFor', () => {
  it('estimates the server clock from the last fetch, never behind it, and notices a clock set back', () => {
    let now = 1000
    const clock = new ServerClock(() => now)
    expect(rangeFor([{ floor: 1n, ceiling: 2n }], clock)).toBeUndefined()
    expect(clock.observe(50_000_000_000n, 1000)).toBe(true)
    now = 3000
    expect(clock.estimate()).toBe(50_002_000_000n)
    const range = rangeFor(
      [
        { floor: 40_000_000_000n, ceiling: 45_000_000_000n },
        { floor: 41_000_000_000n, ceiling: 50_100_000_000n },
      ],
      clock,
    )
    expect(range).toEqual({ lo: 40_000_000_000n - readSlack.us, hi: 50_100_000_000n + readSlack.us })
    expect(
      rangeFor(
        [
          { floor: 40_000_000_000n, ceiling: 45_000_000_000n },
          { floor: null, ceiling: null },
        ],
        clock,
      ),
    ).toBeUndefined()
    expect(clock.observe(50_002_000_000n - readSlack.us - 1n, 3000)).toBe(false)
    expect(clock.epoch).toBe(1)
  })
})

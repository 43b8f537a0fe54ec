// The fetch's "drained" flag decides whether a member records a read floor (docs/decisions/scale-011): a band that
// may hold more than came back must never count as drained, or a floor could exclude rows it did not see.
import { describe, expect, it } from 'vitest'
import { anyBandCut, type FetchedRow } from '../../../src/store/fetch.js'

const row = (priority: number, seq: number, bytes: number): FetchedRow => ({
  seq: String(seq),
  priority,
  routingKey: '',
  messageKey: null,
  flags: 0,
  payload: Buffer.alloc(bytes),
  compression: 0,
  headers: null,
  timestampMs: '0',
  enqueuedAtMs: '0',
  payloadBytes: bytes,
})

describe('anyBandCut', () => {
  const limit = { rows: 3, bytesPerPartition: 100 }

  it('a partition with no rows, or bands under both limits, is drained', () => {
    expect(anyBandCut([], limit)).toBe(false)
    expect(anyBandCut([row(0, 1, 40), row(0, 2, 40), row(5, 3, 99)], limit)).toBe(false)
  })

  it('a band that filled the row limit may hold more', () => {
    expect(anyBandCut([row(0, 1, 1), row(0, 2, 1), row(0, 3, 1)], limit)).toBe(true)
    // three rows over two bands fill neither
    expect(anyBandCut([row(0, 1, 1), row(0, 2, 1), row(1, 3, 1)], limit)).toBe(false)
  })

  it('a band whose rows reach the byte budget may hold more, whichever band it is', () => {
    expect(anyBandCut([row(0, 1, 60), row(0, 2, 40)], limit)).toBe(true)
    expect(anyBandCut([row(0, 1, 60), row(3, 2, 60), row(3, 3, 40)], limit)).toBe(true)
    // the first row always comes, however large
    expect(anyBandCut([row(2, 1, 5000)], limit)).toBe(true)
  })

  it('counts each band on its own', () => {
    expect(anyBandCut([row(0, 1, 60), row(1, 2, 60), row(2, 3, 60)], limit)).toBe(false)
  })
})

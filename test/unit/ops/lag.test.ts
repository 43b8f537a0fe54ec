import { describe, expect, it } from 'vitest'
import { aggregateLag, partitionLag } from '../../../src/ops/lag.js'
import { lagEnvelope } from '../../../src/ops/http/messaging.js'

const cell = (group: string, topic: string, partition: number, offset: string, high: string) => ({
  group,
  topic,
  partition,
  offset,
  high,
  committedAt: 1000,
})

describe('partitionLag', () => {
  it('lag is high - offset, never negative', () => {
    expect(partitionLag(cell('g', 't', 0, '3', '5'))).toEqual({ partition: 0, offset: '3', high: '5', lag: '2', aheadBy: '0', committedAt: 1000 })
    expect(partitionLag(cell('g', 't', 0, '5', '5'))).toMatchObject({ lag: '0', aheadBy: '0' })
    expect(partitionLag(cell('g', 't', 0, '5', '5'))).not.toHaveProperty('metadata')
  })

  it('an offset past the high watermark is STUCK_AHEAD by the difference', () => {
    expect(partitionLag(cell('g', 't', 1, '12', '2'))).toMatchObject({ lag: '0', aheadBy: '10', metadata: 'STUCK_AHEAD' })
  })

  it('stays exact beyond 2^53', () => {
    expect(partitionLag(cell('g', 't', 0, '1', '9007199254740995')).lag).toBe('9007199254740994')
  })
})

describe('aggregateLag', () => {
  const cells = [
    cell('a', 't1', 0, '1', '4'),
    cell('a', 't1', 1, '9', '2'),
    cell('a', 't1', 2, '0', '5'),
    cell('a', 't2', 0, '0', '0'),
    cell('b', 't1', 0, '4', '4'),
  ]

  it('sums per group and topic; STUCK_AHEAD partitions are counted, not added to the lag', () => {
    expect(aggregateLag(cells, false)).toEqual([
      {
        group: 'a',
        topics: [
          { topic: 't1', totalLag: '8', maxLag: '5', partitionCount: 3, stuckAhead: 1 },
          { topic: 't2', totalLag: '0', maxLag: '0', partitionCount: 1, stuckAhead: 0 },
        ],
      },
      { group: 'b', topics: [{ topic: 't1', totalLag: '0', maxLag: '0', partitionCount: 1, stuckAhead: 0 }] },
    ])
  })

  it('keeps the partitions only when detailed', () => {
    const detailed = aggregateLag(cells, true)
    expect(detailed[0]!.topics[0]!.partitions!.map((p) => [p.partition, p.lag, p.metadata])).toEqual([
      [0, '3', undefined],
      [1, '0', 'STUCK_AHEAD'],
      [2, '5', undefined],
    ])
    expect(aggregateLag([], true)).toEqual([])
  })

  it('renders as DataHub’s envelope', () => {
    expect(lagEnvelope(aggregateLag(cells.slice(0, 2), true))).toEqual({
      transport: 'pgqueue',
      consumerGroups: {
        a: {
          t1: {
            metrics: { totalLag: 3, maxLag: 3, partitions: 2, stuckAhead: 1 },
            partitions: { '0': { offset: 1, high: 4, lag: 3 }, '1': { offset: 9, high: 2, lag: 0, aheadBy: 7, metadata: 'STUCK_AHEAD' } },
          },
        },
      },
    })
  })
})

import { describe, expect, it } from 'vitest'
import { createLogger } from '../../../src/kafkajs/logger.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { consumerEvents, createInstrumentationEmitter } from '../../../src/kafkajs/instrumentation.js'
import { FetchManager, type FetchSource } from '../../../src/consumer/fetchManager.js'
import { OffsetManager } from '../../../src/consumer/offsetManager.js'
import { PartitionState } from '../../../src/consumer/partitionState.js'
import { selectBatches } from '../../../src/consumer/bandSelection.js'
import type { FetchedRow } from '../../../src/store/fetch.js'

const BANDS = [
  { range: [0, 4] as [number, number], weight: 3 },
  { range: [5, 9] as [number, number], weight: 1 },
]

const row = (seq: number, priority = 5, payloadBytes = 1): FetchedRow => ({
  seq: String(seq),
  priority,
  routingKey: '',
  messageKey: null,
  flags: 0,
  payload: Buffer.alloc(payloadBytes),
  compression: 0,
  headers: null,
  timestampMs: '0',
  enqueuedAtMs: '0',
  payloadBytes,
})

/** A log of rows at priority 5 for one partition; fetch returns the rows above the partition's position. */
function fakeSource(log: FetchedRow[]): FetchSource & { fetches: bigint[] } {
  const fetches: bigint[] = []
  return {
    fetches,
    async fetch(partitions, { rows: limit }) {
      return partitions.map((p) => {
        fetches.push(p.positions[5])
        const above = log.filter((r) => BigInt(r.seq) > p.positions[r.priority])
        return { highWatermark: String(log.length), rows: above.slice(0, limit), drained: above.length < limit, serverNow: 0n }
      })
    },
    watermarks: async () => ({ low: 0n, high: BigInt(log.length) }),
  }
}

function setup(log: FetchedRow[], perBatch = 2) {
  const logger = createLogger({ level: logLevel.NOTHING })
  const emitter = createInstrumentationEmitter(consumerEvents)
  const state = new PartitionState('t', '1', 0, 0n, null)
  const offsets = new OffsetManager({
    writer: { write: async () => [], topicIds: async () => new Map() },
    owner: { memberId: 'm', generation: 1, partitions: new Map([[state.key, state]]), topicName: () => 't' },
    groupId: 'g',
    autoCommit: false,
    autoCommitInterval: null,
    autoCommitThreshold: null,
    emitter,
    logger,
  })
  const source = fakeSource(log)
  const fetcher = new FetchManager({
    source,
    offsets,
    emitter,
    logger,
    groupId: 'g',
    bands: BANDS,
    perBatch,
    maxBytesPerPartition: 1 << 20,
    maxBytes: 10 << 20,
    fromBeginning: () => true,
    onFenced: () => undefined,
  })
  return { state, source, fetcher }
}

describe('FetchManager', () => {
  it("stops a partition's round after a partially resolved batch and fetches again from the last resolved offset", async () => {
    const { state, source, fetcher } = setup(Array.from({ length: 6 }, (_, i) => row(i + 1)))
    const work = await fetcher.round([state], false)
    expect(work[0].batches.map((b) => b.map((d) => d.seq))).toEqual([
      [1n, 2n],
      [3n, 4n],
      [5n, 6n],
    ])
    const handled: bigint[][] = []
    await fetcher.runWorkers(
      work,
      1,
      async (s, delivered) => {
        handled.push(delivered.map((d) => d.seq))
        s.resolve(delivered[0].seq, 5)
        s.rewind()
      },
      () => true,
      async () => true,
    )
    expect(handled).toEqual([[1n, 2n]])
    await fetcher.round([state], false)
    expect(source.fetches).toEqual([0n, 1n])
  })

  it('discards a prefetched round once the partition moved', async () => {
    // more rows than one fetch takes (16), so the round prefetches
    const { state, source, fetcher } = setup(Array.from({ length: 20 }, (_, i) => row(i + 1)))
    await fetcher.round([state], true)
    state.seekTo(0n)
    const again = await fetcher.round([state], false)
    expect(again[0].batches[0][0].seq).toBe(1n)
    expect(source.fetches).toEqual([0n, 16n, 0n])
  })

  it('prefetches nothing after a round that drained its partitions, and says so', async () => {
    const { state, source, fetcher } = setup(Array.from({ length: 4 }, (_, i) => row(i + 1)))
    await fetcher.round([state], true)
    expect(fetcher.lastRoundDrained).toBe(true)
    expect(source.fetches).toEqual([0n])
  })

  it('rewinds the partitions whose batches never ran', async () => {
    const { state, fetcher } = setup([row(1), row(2)])
    const work = await fetcher.round([state], false)
    expect(state.positions[5]).toBe(2n)
    await fetcher.runWorkers(
      work,
      1,
      async () => undefined,
      () => false,
      async () => true,
    )
    expect(state.positions[5]).toBe(0n)
  })
})

describe('selectBatches', () => {
  const limits = { bands: BANDS, perBatch: 4, count: 2, maxBytes: 100, fetchLimit: 8 }

  it('splits each batch across bands by weight, giving unused slots to the other band', () => {
    const rows = [row(1, 0), row(2, 0), row(3, 0), row(4, 0), row(5, 7), row(6, 7), row(7, 7)]
    const [first, second] = selectBatches(rows, limits)
    expect(first.map((r) => r.seq)).toEqual(['1', '2', '3', '5'])
    expect(second.map((r) => r.seq)).toEqual(['4', '6', '7'])
  })

  it('caps a batch by payload bytes but always takes one message', () => {
    const rows = [row(1, 5, 150), row(2, 5, 60), row(3, 5, 60)]
    const batches = selectBatches(rows, { ...limits, count: 3 })
    expect(batches.map((b) => b.map((r) => r.seq))).toEqual([['1'], ['2'], ['3']])
  })

  it('cuts no further batch once a priority that hit the fetch limit has less than a batch left', () => {
    const rows = Array.from({ length: 6 }, (_, i) => row(i + 1))
    expect(selectBatches(rows, { ...limits, fetchLimit: 6 })).toHaveLength(1)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consumerLag, resetOffsets, contextOf, OpsError } from '../../../src/ops/index.js'
import type { PgQueueContext } from '../../../src/client/context.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_lag')
const admin = t.kafka.admin()
let ctx: PgQueueContext
beforeAll(async () => {
  await admin.connect()
  ctx = contextOf(t.kafka)!
})
afterAll(() => admin.disconnect())

/** A topic with `counts[p]` messages in partition p. */
async function topicWith(counts: number[]): Promise<string> {
  const topic = uniqueName('lag')
  await admin.createTopics({ topics: [{ topic, numPartitions: counts.length }] })
  const messages = counts.flatMap((n, partition) => Array.from({ length: n }, (_, i) => ({ partition, value: `${partition}-${i}` })))
  if (messages.length > 0) await (await t.producer()).send({ topic, messages })
  return topic
}

const commit = (groupId: string, topic: string, offsets: Record<number, string>) =>
  admin.setOffsets({ groupId, topic, partitions: Object.entries(offsets).map(([p, offset]) => ({ partition: Number(p), offset })) })

/** What an operator (or a restored backup, or DataHub's own client) can do: an offset past the log end. */
async function forceOffset(groupId: string, topic: string, partition: number, offset: number): Promise<void> {
  const { tables } = ctx
  await t.db.pool.query(
    `UPDATE ${tables.consumerOffset} SET offset_value = $4
     WHERE consumer_group = $1 AND partition_id = $3 AND topic_id = (SELECT id FROM ${tables.topic} WHERE topic_name = $2)`,
    [groupId, topic, partition, offset],
  )
}

async function committed(groupId: string, topic: string): Promise<string[]> {
  return (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.map((p) => p.offset)
}

describe('consumerLag', () => {
  it('reports lag per partition and aggregates it per topic', async () => {
    const topic = await topicWith([5, 2])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '3', 1: '2' })
    const [summary] = await consumerLag(ctx, { group })
    expect(summary).toEqual({ group, topics: [{ topic, totalLag: '2', maxLag: '2', partitionCount: 2, stuckAhead: 0 }] })

    const [detailed] = await consumerLag(ctx, { group, topic, detailed: true })
    expect(detailed!.topics[0]!.partitions).toEqual([
      { partition: 0, offset: '3', high: '5', lag: '2', aheadBy: '0', committedAt: expect.any(Number) },
      { partition: 1, offset: '2', high: '2', lag: '0', aheadBy: '0', committedAt: expect.any(Number) },
    ])
  })

  it('marks a committed offset past the high watermark STUCK_AHEAD and leaves it out of the lag sum', async () => {
    const topic = await topicWith([4, 2])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '1', 1: '2' })
    await forceOffset(group, topic, 1, 10)
    const [lag] = await consumerLag(ctx, { group, detailed: true })
    const t0 = lag!.topics[0]!
    expect(t0).toMatchObject({ totalLag: '3', maxLag: '3', stuckAhead: 1 })
    expect(t0.partitions![1]).toMatchObject({ offset: '10', high: '2', lag: '0', aheadBy: '8', metadata: 'STUCK_AHEAD' })
    expect(t0.partitions![0]).not.toHaveProperty('metadata')
  })

  it('filters by topic and group, and rejects an unknown topic with 404', async () => {
    const topic = await topicWith([1])
    const other = await topicWith([1])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '0' })
    await commit(group, other, { 0: '1' })
    expect((await consumerLag(ctx, { group }))[0]!.topics.map((x) => x.topic).sort()).toEqual([topic, other].sort())
    expect((await consumerLag(ctx, { group, topic }))[0]!.topics.map((x) => x.topic)).toEqual([topic])
    expect(await consumerLag(ctx, { group: uniqueName('nobody') })).toEqual([])
    await expect(consumerLag(ctx, { topic: uniqueName('missing') })).rejects.toMatchObject({ status: 404 })
  })
})

describe('resetOffsets', () => {
  it('by default resets only the STUCK_AHEAD cells, to the high watermark', async () => {
    const topic = await topicWith([4, 2])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '1', 1: '2' })
    await forceOffset(group, topic, 1, 10)
    const result = await resetOffsets(ctx, { group })
    expect(result).toEqual({
      partitionsUpdated: 1,
      resets: [{ group, topic, partition: 1, previousOffset: '10', newOffset: '2', high: '2' }],
    })
    expect(await committed(group, topic)).toEqual(['1', '2'])
    const [lag] = await consumerLag(ctx, { group })
    expect(lag!.topics[0]!.stuckAhead).toBe(0)
  })

  it('resets an emptied partition to its log end, not to 0 (the ledger keeps next_seq)', async () => {
    const topic = await topicWith([3])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '3' })
    // retention removed every row of the partition
    await t.db.pool.query(`DELETE FROM ${ctx.tables.message} WHERE topic_id = (SELECT id FROM ${ctx.tables.topic} WHERE topic_name = $1)`, [topic])
    await forceOffset(group, topic, 0, 40)
    const { resets } = await resetOffsets(ctx, { group, topic, partition: 0 })
    expect(resets).toEqual([{ group, topic, partition: 0, previousOffset: '40', newOffset: '3', high: '3' }])
    expect(await admin.fetchTopicOffsets(topic)).toEqual([{ partition: 0, offset: '3', high: '3', low: '3' }])
  })

  it('resets a partition that never had a message', async () => {
    const topic = await topicWith([0, 0])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '0', 1: '0' })
    await forceOffset(group, topic, 1, 7)
    const { resets } = await resetOffsets(ctx, { topic })
    expect(resets).toEqual([{ group, topic, partition: 1, previousOffset: '7', newOffset: '0', high: '0' }])
    expect(await committed(group, topic)).toEqual(['0', '0'])
  })

  it('with onlyStuckAhead=false moves every partition of the group to the end, including ones never committed', async () => {
    const topic = await topicWith([3, 1, 2])
    const group = uniqueName('g')
    const bystander = uniqueName('g')
    await commit(group, topic, { 0: '1' })
    await commit(bystander, topic, { 0: '0' })
    const result = await resetOffsets(ctx, { group, topic, onlyStuckAhead: false })
    expect(result.resets).toEqual([
      { group, topic, partition: 0, previousOffset: '1', newOffset: '3', high: '3' },
      { group, topic, partition: 1, previousOffset: null, newOffset: '1', high: '1' },
      { group, topic, partition: 2, previousOffset: null, newOffset: '2', high: '2' },
    ])
    expect(await committed(group, topic)).toEqual(['3', '1', '2'])
    expect(await committed(bystander, topic)).toEqual(['0', '-1', '-1'])
  })

  it('a consumer resumes after the reset offset', async () => {
    const topic = await topicWith([2])
    const group = uniqueName('g')
    await commit(group, topic, { 0: '2' })
    await forceOffset(group, topic, 0, 50)
    await resetOffsets(ctx, { group, topic })
    await (await t.producer()).send({ topic, messages: [{ value: 'after-reset' }] })
    const consumer = await t.consumer({ groupId: group })
    await consumer.subscribe({ topic })
    const seen = new Promise<string>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(`${message.offset}:${message.value}`) })
    })
    expect(await seen).toBe('2:after-reset')
    await consumer.stop()
  })

  it('rejects bad input with 400 and unknown topics with 404', async () => {
    await expect(resetOffsets(ctx, { partition: 0 })).rejects.toMatchObject({ status: 400 })
    await expect(resetOffsets(ctx, { topic: 'x', partition: -1 })).rejects.toBeInstanceOf(OpsError)
    await expect(resetOffsets(ctx, { group: '' })).rejects.toMatchObject({ status: 400 })
    await expect(resetOffsets(ctx, { topic: uniqueName('missing') })).rejects.toMatchObject({ status: 404 })
  })
})

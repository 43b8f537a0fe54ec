import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KafkaMessage } from 'kafkajs'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_offsets')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

/** A 2-partition topic with `counts[p]` messages in partition p (values `p-i`, timestamps 1000 * (i + 1)). */
async function topicWith(counts: number[]): Promise<string> {
  const topic = uniqueName('off')
  await admin.createTopics({ topics: [{ topic, numPartitions: counts.length }] })
  const producer = await t.producer()
  const messages = counts.flatMap((n, partition) =>
    Array.from({ length: n }, (_, i) => ({ partition, value: `${partition}-${i}`, timestamp: String(1000 * (i + 1)) })),
  )
  if (messages.length > 0) await producer.send({ topic, messages })
  return topic
}

const offsetsOf = async (groupId: string, topic: string) =>
  (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.map((p) => p.offset)

describe('topic offsets', () => {
  it('reports high and low watermarks per partition', async () => {
    const empty = await topicWith([0, 0])
    expect(await admin.fetchTopicOffsets(empty)).toEqual([
      { partition: 0, offset: '0', high: '0', low: '0' },
      { partition: 1, offset: '0', high: '0', low: '0' },
    ])
    const topic = await topicWith([5, 2])
    expect(await admin.fetchTopicOffsets(topic)).toEqual([
      { partition: 0, offset: '5', high: '5', low: '0' },
      { partition: 1, offset: '2', high: '2', low: '0' },
    ])
  })

  it('finds the first offset at or after a timestamp, else the high watermark', async () => {
    const topic = await topicWith([3, 0])
    expect(await admin.fetchTopicOffsetsByTimestamp(topic, 1500)).toEqual([
      { partition: 0, offset: '1' },
      { partition: 1, offset: '0' },
    ])
    expect(await admin.fetchTopicOffsetsByTimestamp(topic, 1000)).toEqual([
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ])
    expect(await admin.fetchTopicOffsetsByTimestamp(topic, 99_999)).toEqual([
      { partition: 0, offset: '3' },
      { partition: 1, offset: '0' },
    ])
    expect(await admin.fetchTopicOffsetsByTimestamp(topic)).toEqual([
      { partition: 0, offset: '3' },
      { partition: 1, offset: '0' },
    ])
  })

  it('rejects invalid and unknown topics', async () => {
    await expect(admin.fetchTopicOffsets('')).rejects.toThrow('Invalid topic ')
    await expect(admin.fetchTopicOffsetsByTimestamp(undefined as never)).rejects.toThrow('Invalid topic undefined')
    await expect(admin.fetchTopicOffsets(uniqueName('none'))).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' })
  })
})

describe('group offsets', () => {
  it("returns '-1' for partitions never committed and exact values after setOffsets, which may move back", async () => {
    const topic = await topicWith([5, 2])
    const groupId = uniqueName('g')
    expect(await admin.fetchOffsets({ groupId, topics: [topic] })).toEqual([
      {
        topic,
        partitions: [
          { partition: 0, offset: '-1', metadata: null },
          { partition: 1, offset: '-1', metadata: null },
        ],
      },
    ])
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '4' }] })
    expect(await offsetsOf(groupId, topic)).toEqual(['4', '-1'])
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '1' },
        { partition: 1, offset: '2' },
      ],
    })
    expect(await offsetsOf(groupId, topic)).toEqual(['1', '2'])
  })

  it("stores '-1' / '-2' as the marker (as Kafka does) and the watermark it meant in offset_value", async () => {
    const topic = await topicWith([5, 2])
    const groupId = uniqueName('g')
    const stored = async () =>
      (
        await t.db.pool.query<{ offset_value: string }>(
          `SELECT o.offset_value::text FROM ${t.db.schema}.metadata_queue_consumer_offset o
           JOIN ${t.db.schema}.metadata_queue_topic tp ON tp.id = o.topic_id
           WHERE o.consumer_group = $1 AND tp.topic_name = $2 ORDER BY o.partition_id`,
          [groupId, topic],
        )
      ).rows.map((r) => r.offset_value)
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '-1' },
        { partition: 1, offset: '-2' },
      ],
    })
    expect(await offsetsOf(groupId, topic)).toEqual(['-1', '-2'])
    expect(await stored()).toEqual(['5', '0'])
    await admin.resetOffsets({ groupId, topic, earliest: true })
    expect(await offsetsOf(groupId, topic)).toEqual(['-2', '-2'])
    expect(await stored()).toEqual(['0', '0'])
    await admin.resetOffsets({ groupId, topic } as never)
    expect(await offsetsOf(groupId, topic)).toEqual(['-1', '-1'])
    expect(await stored()).toEqual(['5', '2'])
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '3' }] })
    expect(await offsetsOf(groupId, topic)).toEqual(['3', '-1'])
  })

  it('without topics lists only what the group committed', async () => {
    const [a, b, unrelated] = [await topicWith([1, 1]), await topicWith([1, 1]), await topicWith([1, 1])]
    const groupId = uniqueName('g')
    await admin.setOffsets({ groupId, topic: a, partitions: [{ partition: 1, offset: '1' }] })
    await admin.setOffsets({
      groupId,
      topic: b,
      partitions: [
        { partition: 0, offset: '0' },
        { partition: 1, offset: '1' },
      ],
    })
    const all = await admin.fetchOffsets({ groupId })
    expect(all.map((x) => x.topic).sort()).toEqual([a, b].sort())
    expect(all.find((x) => x.topic === a)!.partitions).toEqual([{ partition: 1, offset: '1', metadata: null }])
    expect(all.find((x) => x.topic === unrelated)).toBeUndefined()
  })

  it('resolveOffsets turns -1 into the high watermark and writes it', async () => {
    const topic = await topicWith([3, 1])
    const groupId = uniqueName('g')
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 1, offset: '0' }] })
    const resolved = await admin.fetchOffsets({ groupId, topics: [topic], resolveOffsets: true })
    expect(resolved[0]!.partitions.map((p) => p.offset)).toEqual(['3', '0'])
    expect(await offsetsOf(groupId, topic)).toEqual(['3', '0'])
  })

  it('a consumer of the group starts where setOffsets put it', async () => {
    const topic = await topicWith([5, 0])
    const groupId = uniqueName('g')
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '3' },
        { partition: 1, offset: '0' },
      ],
    })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: KafkaMessage[] = []
    const done = deferred()
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message)
        if (seen.length === 2) done.resolve()
      },
    })
    await done.promise
    expect(seen.map((m) => [m.offset, m.value!.toString()])).toEqual([
      ['3', '0-3'],
      ['4', '0-4'],
    ])
    await consumer.disconnect()
  })

  it('refuses to set or reset offsets while the group has running members', async () => {
    const topic = await topicWith([2, 0])
    const groupId = uniqueName('g')
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
    await waitFor(async () => (await admin.describeGroups([groupId])).groups[0]!.state === 'Stable')
    const message = 'The consumer group must have no running instances, current state: Stable'
    for (const call of [
      () => admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] }),
      () => admin.resetOffsets({ groupId, topic, earliest: true }),
      () => admin.fetchOffsets({ groupId, topics: [topic], resolveOffsets: true }),
    ]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe(message)
    }
    await consumer.disconnect()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] })
    expect(await offsetsOf(groupId, topic)).toEqual(['0', expect.any(String)])
  })

  it('validates like KafkaJS', async () => {
    const topic = await topicWith([1, 0])
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => admin.fetchOffsets({} as never), 'Invalid groupId undefined'],
      [() => admin.fetchOffsets({ groupId: 'g', topics: 'x' } as never), 'Expected topics array to be set'],
      [() => admin.setOffsets({ groupId: '', topic, partitions: [] }), 'Invalid groupId '],
      [() => admin.setOffsets({ groupId: 'g', topic: '', partitions: [] }), 'Invalid topic '],
      [() => admin.setOffsets({ groupId: 'g', topic, partitions: [] }), 'Invalid partitions'],
      [
        () => admin.setOffsets({ groupId: 'g', topic, partitions: [{ partition: 0, offset: 'abc' }] }),
        'Invalid offset, expected a long received abc',
      ],
      [() => admin.setOffsets({ groupId: 'g', topic, partitions: [{ partition: 0, offset: '-5' }] }), 'Offset must not be a negative number'],
      [() => admin.resetOffsets({ groupId: 'g' } as never), 'Invalid topic undefined'],
    ]
    for (const [call, message] of cases) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe(message)
    }
    await expect(admin.fetchOffsets({ groupId: 'g', topics: [uniqueName('none')] })).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' })
  })
})

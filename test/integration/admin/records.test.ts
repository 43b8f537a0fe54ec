import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KafkaMessage } from 'kafkajs'
import { KafkaJSBrokerNotFound, KafkaJSDeleteTopicRecordsError, KafkaJSNonRetriableError, KafkaJSProtocolError } from '../../../src/kafkajs/errors.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_records')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

/** A topic with `counts[p]` messages in partition p, values `p-i`. */
async function topicWith(counts: number[]): Promise<string> {
  const topic = uniqueName('rec')
  await admin.createTopics({ topics: [{ topic, numPartitions: counts.length }] })
  const messages = counts.flatMap((n, partition) => Array.from({ length: n }, (_, i) => ({ partition, value: `${partition}-${i}` })))
  await (await t.producer()).send({ topic, messages })
  return topic
}

const marks = async (topic: string) => (await admin.fetchTopicOffsets(topic)).map(({ low, high }) => [low, high])

async function consumeAll(topic: string, expected: number): Promise<KafkaMessage[]> {
  const consumer = await t.consumer()
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen: KafkaMessage[] = []
  const done = deferred()
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push(message)
      if (seen.length === expected) done.resolve()
    },
  })
  await done.promise
  await consumer.disconnect()
  return seen
}

const rejection = async (p: Promise<unknown>): Promise<any> =>
  p.then(
    () => expect.unreachable('should reject'),
    (e: unknown) => e,
  )

describe('deleteTopicRecords', () => {
  it('deletes records below the offset; the low watermark moves and offsets keep counting', async () => {
    const topic = await topicWith([10, 3])
    await expect(admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '4' }] })).resolves.toBeUndefined()
    expect(await marks(topic)).toEqual([
      ['4', '10'],
      ['0', '3'],
    ])
    const [meta] = await (await t.producer()).send({ topic, messages: [{ partition: 0, value: '0-10' }] })
    expect(meta.baseOffset).toBe('10')
    const seen = await consumeAll(topic, 7 + 3)
    const p0 = seen.filter((m) => m.value!.toString().startsWith('0-'))
    expect(p0.map((m) => m.offset)).toEqual(['4', '5', '6', '7', '8', '9', '10'])
  })

  it("'-1' empties the partition up to the high watermark; an offset below the low watermark deletes nothing", async () => {
    const topic = await topicWith([5, 2])
    await admin.deleteTopicRecords({
      topic,
      partitions: [
        { partition: 0, offset: '-1' },
        { partition: 1, offset: '1' },
      ],
    })
    expect(await marks(topic)).toEqual([
      ['5', '5'],
      ['1', '2'],
    ])
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '0' }] })
    expect(await marks(topic)).toEqual([
      ['5', '5'],
      ['1', '2'],
    ])
    const [meta] = await (await t.producer()).send({ topic, messages: [{ partition: 0, value: 'after' }] })
    expect(meta.baseOffset).toBe('5')
    expect(await marks(topic)).toEqual([
      ['5', '6'],
      ['1', '2'],
    ])
  })

  it('an offset past the high watermark is OFFSET_OUT_OF_RANGE (wrapped as KafkaJS does); other partitions are still cut', async () => {
    const topic = await topicWith([3, 3])
    const err = await rejection(
      admin.deleteTopicRecords({
        topic,
        partitions: [
          { partition: 0, offset: '2' },
          { partition: 1, offset: '4' },
        ],
      }),
    )
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Error while deleting records')
    expect(err.cause).toBeInstanceOf(KafkaJSDeleteTopicRecordsError)
    expect(err.cause.partitions).toHaveLength(1)
    expect(err.cause.partitions[0]).toMatchObject({ partition: 1, offset: '4' })
    expect(err.cause.partitions[0].error).toBeInstanceOf(KafkaJSProtocolError)
    expect(err.cause.partitions[0].error).toMatchObject({ type: 'OFFSET_OUT_OF_RANGE', code: 1 })
    expect(await marks(topic)).toEqual([
      ['2', '3'],
      ['0', '3'],
    ])
  })

  it('a partition the topic does not have fails the whole call with KafkaJSBrokerNotFound', async () => {
    const topic = await topicWith([2])
    const err = await rejection(
      admin.deleteTopicRecords({
        topic,
        partitions: [
          { partition: 0, offset: '1' },
          { partition: 7, offset: '1' },
        ],
      }),
    )
    expect(err).toBeInstanceOf(KafkaJSDeleteTopicRecordsError)
    expect(err.partitions).toEqual([{ partition: 7, offset: '1', error: expect.any(KafkaJSBrokerNotFound) }])
    expect(err.partitions[0].error.message).toBe('Could not find the leader for the partition')
    expect(await marks(topic)).toEqual([['0', '2']])
  })

  it('validates like KafkaJS and rejects unknown topics', async () => {
    await expect(admin.deleteTopicRecords({ partitions: [] } as never)).rejects.toThrow('Invalid topic "undefined"')
    await expect(admin.deleteTopicRecords({ topic: 'x', partitions: [] })).rejects.toThrow('Invalid partitions')
    await expect(admin.deleteTopicRecords({ topic: 'x', partitions: [{ partition: 0, offset: 'soon' }] })).rejects.toThrow(
      'Invalid offset, expected a long received soon',
    )
    await expect(admin.deleteTopicRecords({ topic: uniqueName('none'), partitions: [{ partition: 0, offset: '1' }] })).rejects.toMatchObject({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    })
  })
})

// NaN / negative / non-numeric / out-of-range offsets in consumer.seek, consumer.commitOffsets and admin.setOffsets:
// refused with a KafkaJS error, and the group's committed offsets are exactly as they were.
import type { Consumer } from 'kafkajs'
import { beforeAll, describe, expect, it } from 'vitest'
import { KafkaJSError, KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('input_offsets')
const topic = uniqueName('offsets')
const group = uniqueName('g')
const idleGroup = uniqueName('idle')
let consumer: Consumer
const received: string[] = []

const committed = async (groupId: string) =>
  (
    await t.db.pool.query<{ partition_id: number; offset_value: string }>(
      `SELECT partition_id, offset_value::text FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1 ORDER BY 1`,
      [groupId],
    )
  ).rows

beforeAll(async () => {
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
  const producer = await t.producer()
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ value: `m-${i}`, partition: 0 })) })
  await admin.setOffsets({ groupId: idleGroup, topic, partitions: [{ partition: 0, offset: '2' }] })
  await admin.disconnect()
  consumer = await t.consumer({ groupId: group })
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({ eachMessage: async ({ message }) => void received.push(message.value!.toString()) })
  await waitFor(async () => received.length === 5 && (await committed(group)).some((r) => r.partition_id === 0 && r.offset_value === '5'), {
    timeout: 15_000,
  })
})

const BAD_OFFSETS: unknown[] = [Number.NaN, 'NaN', 'abc', '', '1.5', 1.5, '1e3', null, undefined, {}, [], true, '-3', -3]
const BAD_PARTITIONS: unknown[] = [-1, 1.5, 'x', Number.NaN, null]

describe('consumer.seek', () => {
  it.each(BAD_OFFSETS)('offset %j is refused synchronously; nothing committed', async (offset) => {
    const before = await committed(group)
    expect(() => consumer.seek({ topic, partition: 0, offset: offset as string })).toThrow(KafkaJSNonRetriableError)
    expect(await committed(group)).toEqual(before)
  })
  it.each(BAD_PARTITIONS)('partition %j is refused synchronously', (partition) => {
    expect(() => consumer.seek({ topic, partition: partition as number, offset: '0' })).toThrow(KafkaJSNonRetriableError)
  })
  // seq = offset + 1 must fit PostgreSQL's int8: today this is accepted, and then every fetch round fails
  // (a consumer of its own, so the others here are not poisoned)
  it.each(['9223372036854775807', '99999999999999999999'])('offset %j beyond the int8 range is refused synchronously', async (offset) => {
    const victim = await t.consumer()
    await victim.subscribe({ topic, fromBeginning: true })
    await victim.run({ eachMessage: async () => undefined })
    let threw: unknown
    try {
      victim.seek({ topic, partition: 1, offset })
    } catch (e) {
      threw = e
    }
    await victim.disconnect()
    expect(threw).toBeInstanceOf(KafkaJSNonRetriableError)
  })
})

describe('consumer.commitOffsets', () => {
  it.each(BAD_OFFSETS)('offset %j is refused; nothing committed', async (offset) => {
    const before = await committed(group)
    await expect(consumer.commitOffsets([{ topic, partition: 0, offset: offset as string }])).rejects.toBeInstanceOf(KafkaJSNonRetriableError)
    expect(await committed(group)).toEqual(before)
  })
  it('the seek specials -1 / -2 are not commit offsets', async () => {
    const before = await committed(group)
    await expect(consumer.commitOffsets([{ topic, partition: 0, offset: '-1' }])).rejects.toBeInstanceOf(KafkaJSNonRetriableError)
    await expect(consumer.commitOffsets([{ topic, partition: 0, offset: '-2' }])).rejects.toBeInstanceOf(KafkaJSNonRetriableError)
    expect(await committed(group)).toEqual(before)
  })
  // today the value reaches PostgreSQL and the raw pg DatabaseError ("out of range for type bigint") escapes
  it('an offset beyond the int8 range is refused with a KafkaJS error; nothing committed', async () => {
    const before = await committed(group)
    const err = await consumer.commitOffsets([{ topic, partition: 0, offset: '99999999999999999999' }]).catch((e: unknown) => e)
    expect(err, `got ${(err as Error)?.name}: ${(err as Error)?.message}`).toBeInstanceOf(KafkaJSError)
    expect(await committed(group)).toEqual(before)
  })
})

describe('admin.setOffsets', () => {
  it.each(BAD_OFFSETS)('offset %j is refused; nothing written', async (offset) => {
    const admin = t.kafka.admin()
    await admin.connect()
    const before = await committed(idleGroup)
    await expect(admin.setOffsets({ groupId: idleGroup, topic, partitions: [{ partition: 0, offset: offset as string }] })).rejects.toBeInstanceOf(
      KafkaJSNonRetriableError,
    )
    expect(await committed(idleGroup)).toEqual(before)
    await admin.disconnect()
  })
  it('an offset beyond the int8 range and a bad partition are refused; nothing written', async () => {
    const admin = t.kafka.admin()
    await admin.connect()
    const before = await committed(idleGroup)
    await expect(
      admin.setOffsets({ groupId: idleGroup, topic, partitions: [{ partition: 0, offset: '99999999999999999999' }] }),
    ).rejects.toBeInstanceOf(KafkaJSError)
    await expect(admin.setOffsets({ groupId: idleGroup, topic, partitions: [{ partition: -1, offset: '1' }] })).rejects.toBeInstanceOf(KafkaJSError)
    await expect(admin.setOffsets({ groupId: idleGroup, topic, partitions: [] })).rejects.toBeInstanceOf(KafkaJSError)
    // one bad entry among good ones: nothing of the call is written
    await expect(
      admin.setOffsets({
        groupId: idleGroup,
        topic,
        partitions: [
          { partition: 1, offset: '0' },
          { partition: 0, offset: 'x' },
        ],
      }),
    ).rejects.toBeInstanceOf(KafkaJSError)
    expect(await committed(idleGroup)).toEqual(before)
    await admin.disconnect()
  })
})

describe('seek past the end of the log', () => {
  // Kafka answers a fetch past the log end with OFFSET_OUT_OF_RANGE and the consumer resets (to the latest offset
  // here, fromBeginning being for new groups); it never waits silently for the log to grow to the seeked offset.
  // Today the partition stalls (DataHub's STUCK_AHEAD) until 1000 more messages arrive.
  it('a consumer seeked past the end still receives what is produced next', async () => {
    const seeker = await t.consumer()
    const got: string[] = []
    await seeker.subscribe({ topic, fromBeginning: true })
    await seeker.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) })
    await waitFor(() => got.length >= 5, { timeout: 10_000 })
    // a fetch that started after the seek has read from offset 1000 (and found nothing)
    let startedAfterSeek = false
    const fetchedPastTheEnd = new Promise<void>((resolve) => {
      seeker.on(seeker.events.FETCH_START, () => (startedAfterSeek = true))
      seeker.on(seeker.events.FETCH, () => startedAfterSeek && resolve())
    })
    seeker.seek({ topic, partition: 0, offset: '1000' })
    await fetchedPastTheEnd
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'after-the-seek', partition: 0 }] })
    // the group's main consumer (not seeked) gets it: the topic works
    await waitFor(() => received.includes('after-the-seek'))
    await waitFor(() => got.includes('after-the-seek'))
    await seeker.disconnect()
  })
})

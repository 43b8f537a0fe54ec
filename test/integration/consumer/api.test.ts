// The rest of the consumer API surface: eachBatch helpers, events, stop/run, crash behaviour, validation,
// lease fencing of a member that stalls, and priority bands.
import { describe, expect, it } from 'vitest'
import kafkajs from 'kafkajs'
import type { Batch, ConsumerCrashEvent, EachBatchPayload } from 'kafkajs'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('consumer_api')

async function produce(topic: string, n: number, extra: Record<string, unknown> = {}) {
  const producer = await t.producer()
  await producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ value: `v${i}`, partition: 0, ...extra })) })
}

describe('eachBatch', () => {
  it('hands a batch with KafkaJS helpers and commits what was resolved', async () => {
    const topic = uniqueName('batch')
    await produce(topic, 10)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const batches: Batch[] = []
    const seen = deferred<EachBatchPayload>()
    let uncommitted: unknown
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async (payload) => {
        batches.push(payload.batch)
        expect(payload.isRunning()).toBe(true)
        expect(payload.isStale()).toBe(false)
        for (const m of payload.batch.messages.slice(0, 4)) payload.resolveOffset(m.offset)
        uncommitted = payload.uncommittedOffsets()
        await payload.heartbeat()
        await payload.commitOffsetsIfNecessary()
        seen.resolve(payload)
      },
    })
    const payload = await seen.promise
    const batch = batches[0]
    expect(batch.firstOffset()).toBe('0')
    expect(batch.lastOffset()).toBe('9')
    expect(batch.highWatermark).toBe('10')
    expect(batch.offsetLag()).toBe('0')
    expect(batch.offsetLagLow()).toBe('9')
    expect(batch.isEmpty()).toBe(false)
    // KafkaJS's own value: its partitions come from object keys (strings), whatever the declared type says
    expect(uncommitted).toEqual({ topics: [{ topic, partitions: [{ partition: '0', offset: '4' }] }] })
    expect(payload.batch.messages).toHaveLength(10)
    await consumer.stop()
    const admin = t.kafka.admin()
    await admin.connect()
    const offsets = await admin.fetchOffsets({ groupId: (await consumer.describeGroup()).groupId, topics: [topic] })
    await admin.disconnect()
    expect(offsets[0].partitions[0].offset).toBe('4')
  })
})

describe('events and lifecycle', () => {
  it('emits KafkaJS events with their payload shapes', async () => {
    const topic = uniqueName('events')
    await produce(topic, 3)
    const consumer = await t.consumer()
    const join = deferred<{ memberAssignment: Record<string, number[]>; memberId: string; isLeader: boolean }>()
    const end = deferred<{ topic: string; batchSize: number; lastOffset: string }>()
    const commit = deferred<{ topics: Array<{ topic: string; partitions: Array<{ offset: string }> }> }>()
    consumer.on(consumer.events.GROUP_JOIN, (e) => join.resolve(e.payload))
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => end.resolve(e.payload))
    consumer.on(consumer.events.COMMIT_OFFSETS, (e) => commit.resolve(e.payload as never))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => undefined })
    const joined = await join.promise
    expect(joined.memberAssignment).toEqual({ [topic]: expect.arrayContaining([0]) })
    expect(joined.isLeader).toBe(true)
    expect(await end.promise).toMatchObject({ topic, batchSize: 3, lastOffset: '2' })
    expect((await commit.promise).topics[0]).toMatchObject({ topic, partitions: [{ partition: '0', offset: '3' }] }) // KafkaJS's partitions are strings here
    expect(() => consumer.on('consumer.nope' as never, () => undefined)).toThrow(/Event name should be one of/)
  })

  it('stop keeps the subscription and run can be called again', async () => {
    const topic = uniqueName('restart')
    await produce(topic, 2)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    await waitFor(() => seen.length === 2)
    await consumer.stop()
    await produce(topic, 1, { value: 'after-stop' })
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    await waitFor(() => seen.length === 3)
    expect(seen[2]).toBe('after-stop')
  })

  it('validates like KafkaJS', async () => {
    expect(() => t.kafka.consumer({ groupId: '' })).toThrow(new KafkaJSNonRetriableError('Consumer groupId must be a non-empty string.'))
    expect(() => t.kafka.consumer({ groupId: 'g', sessionTimeout: 1000, heartbeatInterval: 2000 })).toThrow(
      /heartbeatInterval \(2000\) must be lower than sessionTimeout \(1000\)/,
    )
    const consumer = await t.consumer()
    await expect(consumer.subscribe({} as never)).rejects.toThrow('Missing required argument "topics"')
    await expect(consumer.subscribe({ topics: 'x' } as never)).rejects.toThrow('Argument "topics" must be an array')
    await expect(consumer.subscribe({ topics: [42] } as never)).rejects.toThrow(
      'Invalid topic 42 (number), the topic name has to be a String or a RegExp',
    )
    expect(() => consumer.seek({ topic: 't', partition: 0, offset: '1' })).toThrow(
      'Consumer group was not initialized, consumer#run must be called first',
    )
    expect(() => consumer.pause([{ topic: 't' }])).toThrow('Consumer group was not initialized, consumer#run must be called first')
    await expect(consumer.commitOffsets([{ topic: 't', partition: 0, offset: '1' }])).rejects.toThrow('Consumer group was not initialized')
    await consumer.subscribe({ topic: uniqueName('v') })
    await consumer.run({ eachMessage: async () => undefined })
    expect(() => consumer.seek({ topic: 't', partition: 0, offset: 'abc' })).toThrow('Invalid offset, expected a long received abc')
    expect(() => consumer.seek({ topic: 't', partition: 0, offset: '-5' })).toThrow('Offset must not be a negative number')
    expect(() => consumer.seek({ topic: 't', partition: NaN, offset: '1' })).toThrow('Invalid partition, expected a number received NaN')
    await expect(consumer.subscribe({ topic: 'late' })).rejects.toThrow('Cannot subscribe to topic while consumer is running')
  })

  it('a non-retriable handler error crashes without restart; a retriable one restarts after the retries', async () => {
    const topic = uniqueName('crash')
    await produce(topic, 1)
    const fatal = await t.consumer({ retry: { retries: 1, initialRetryTime: 20 } })
    await fatal.subscribe({ topic, fromBeginning: true })
    const fatalCrash = deferred<ConsumerCrashEvent['payload']>()
    fatal.on(fatal.events.CRASH, (e) => fatalCrash.resolve(e.payload))
    await fatal.run({
      eachMessage: async () => {
        throw new TypeError('bug in handler')
      },
    })
    const crashed = await fatalCrash.promise
    expect(crashed.restart).toBe(false)
    expect(crashed.error).toBeInstanceOf(kafkajs.KafkaJSNonRetriableError)

    const flaky = await t.consumer({ retry: { retries: 1, initialRetryTime: 20 } })
    await flaky.subscribe({ topic, fromBeginning: true })
    const crash = deferred<ConsumerCrashEvent['payload']>()
    flaky.on(flaky.events.CRASH, (e) => crash.resolve(e.payload))
    let calls = 0
    const delivered = deferred()
    await flaky.run({
      eachMessage: async () => {
        if (++calls <= 2) throw new Error('not yet')
        delivered.resolve()
      },
    })
    const restart = await crash.promise
    expect(restart.restart).toBe(true)
    expect(restart.error.name).toBe('KafkaJSNumberOfRetriesExceeded')
    await delivered.promise
  })
})

describe('leases', () => {
  it('a member stuck in its handler past the session timeout loses the partition; its late commit is refused', async () => {
    const topic = uniqueName('stuck')
    await produce(topic, 3)
    const groupId = uniqueName('stuck')
    const slow = t.newKafka().consumer({ groupId, sessionTimeout: 1500, heartbeatInterval: 200, maxWaitTimeInMs: 300 })
    await slow.connect()
    await slow.subscribe({ topic, fromBeginning: true })
    const release = deferred()
    const slowSaw: string[] = []
    await slow.run({
      eachMessage: async ({ message }) => {
        slowSaw.push(message.value!.toString())
        if (message.offset === '0') await release.promise
      },
    })
    await waitFor(() => slowSaw.length === 1)
    const fast = t.newKafka().consumer({ groupId, sessionTimeout: 1500, heartbeatInterval: 200, maxWaitTimeInMs: 300 })
    await fast.connect()
    await fast.subscribe({ topic, fromBeginning: true })
    const fastSaw: string[] = []
    await fast.run({ eachMessage: async ({ message }) => void fastSaw.push(message.value!.toString()) })
    await waitFor(() => fastSaw.length === 3, { timeout: 15_000 })
    expect(fastSaw).toEqual(['v0', 'v1', 'v2'])
    release.resolve()
    await fast.disconnect()
    await slow.disconnect()
    const admin = t.kafka.admin()
    await admin.connect()
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] })
    await admin.disconnect()
    expect(offsets[0].partitions[0].offset).toBe('3')
    expect(slowSaw).toEqual(['v0'])
  })
})

describe('priorities', () => {
  it('serves higher priorities first within a partition and keeps seq order per priority', async () => {
    const topic = uniqueName('prio')
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { value: 'low-1', partition: 0, priority: 9 },
        { value: 'normal-1', partition: 0 },
        { value: 'high-1', partition: 0, priority: 0 },
        { value: 'low-2', partition: 0, priority: 9 },
        { value: 'high-2', partition: 0, priority: 1 },
      ] as never,
    })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    await waitFor(() => seen.length === 5)
    expect(seen).toEqual(['high-1', 'high-2', 'normal-1', 'low-1', 'low-2'])
    await consumer.stop()
    const admin = t.kafka.admin()
    await admin.connect()
    const offsets = await admin.fetchOffsets({ groupId: (await consumer.describeGroup()).groupId, topics: [topic] })
    await admin.disconnect()
    expect(offsets[0].partitions[0].offset).toBe('5')
  })
})

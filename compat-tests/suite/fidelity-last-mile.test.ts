import { describe, expect } from 'vitest'
import { PartitionAssigners, type EachBatchPayload, type InstrumentationEvent, type KafkaMessage, type OffsetsByTopicPartition } from 'kafkajs'
import {
  Collector,
  contract,
  controlRecords,
  messages,
  once,
  transactionMarkerOffsets,
  transactionalBaseOffset,
  uniqueName,
  waitFor,
  type Scope,
} from '../harness.js'

const needs = ['transactions' as const]

function txProducer(t: Scope) {
  return t.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
}

async function readAll(t: Scope, topic: string, n: number) {
  const consumer = await t.consumer()
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  await seen.waitForCount(n)
  return seen
}

async function offsetsOf(t: Scope, groupId: string, topic: string): Promise<string[]> {
  const [entry] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
  return entry!.partitions.map((p) => p.offset)
}

describe('transactional offsets (KafkaJS producer spec "supports sending offsets")', () => {
  contract(
    'sendOffsets then commit: fetchOffsets returns exactly the committed offsets',
    async (t) => {
      const topic = await t.topic(2)
      const groupId = uniqueName('group')
      const tx = await (await txProducer(t)).transaction()
      await tx.sendOffsets({
        consumerGroupId: groupId,
        topics: [
          {
            topic,
            partitions: [
              { partition: 0, offset: '5' },
              { partition: 1, offset: '10' },
            ],
          },
        ],
      })
      await tx.commit()
      // Kafka writes the offsets when the commit marker reaches the group coordinator, a moment after EndTxn
      await waitFor(async () => (await offsetsOf(t, groupId, topic))[0] === '5', { message: 'offset 5' })
      const fetched = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
      expect(fetched).toEqual([
        {
          topic,
          partitions: [
            { partition: 0, offset: '5', metadata: null },
            { partition: 1, offset: '10', metadata: null },
          ],
        },
      ])
    },
    { needs },
  )

  contract(
    'sendOffsets then abort: fetchOffsets still returns the offsets committed before',
    async (t) => {
      const topic = await t.topic(2)
      const groupId = uniqueName('group')
      const first = await (await txProducer(t)).transaction()
      await first.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] })
      await first.commit()
      await waitFor(async () => (await offsetsOf(t, groupId, topic))[0] === '1', { message: 'offset 1' })
      // another transactional id: Kafka refuses a next transaction of the same id (CONCURRENT_TRANSACTIONS) until the
      // coordinator has finished the commit, which can be after its offsets show (fresh-clone run, 4 Dec)
      const aborted = await (await txProducer(t)).transaction()
      await aborted.sendOffsets({
        consumerGroupId: groupId,
        topics: [
          {
            topic,
            partitions: [
              { partition: 0, offset: '9' },
              { partition: 1, offset: '4' },
            ],
          },
        ],
      })
      await aborted.abort()
      const fetched = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
      expect(fetched).toEqual([
        {
          topic,
          partitions: [
            { partition: 0, offset: '1', metadata: null },
            { partition: 1, offset: '-1', metadata: null },
          ],
        },
      ])
    },
    { needs },
  )

  contract(
    'fetchOffsets without topics lists the topics a committed transaction sent offsets for',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const tx = await (await txProducer(t)).transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '7' }] }] })
      await tx.commit()
      await waitFor(async () => (await offsetsOf(t, groupId, topic))[0] === '7', { message: 'offset 7' })
      const fetched = await (await t.admin()).fetchOffsets({ groupId })
      expect(fetched).toEqual([{ topic, partitions: [{ partition: 0, offset: '7', metadata: null }] }])
    },
    { needs },
  )
})

describe('transactions without operations (KafkaJS producer spec "without operations")', () => {
  for (const end of ['commit', 'abort'] as const) {
    contract(
      `an empty transaction ended with ${end}, then one that sends: offsets and metadata as KafkaJS returns them`,
      async (t) => {
        const topic = await t.topic(1)
        const producer = await txProducer(t)
        const empty = await producer.transaction()
        await expect(empty[end]()).resolves.toBeUndefined()
        expect(empty.isActive()).toBe(false)
        const tx = await producer.transaction()
        const sent = await tx.send({
          topic,
          messages: [
            { value: 'a', partition: 0 },
            { value: 'b', partition: 0 },
          ],
        })
        expect(sent).toEqual([
          { topicName: topic, partition: 0, errorCode: 0, baseOffset: transactionalBaseOffset('0'), logAppendTime: '-1', logStartOffset: '0' },
        ])
        await tx.commit()
        // the empty transaction left nothing in the log; the second one its two messages and its commit marker
        const high = String(2 + transactionMarkerOffsets)
        await waitFor(async () => (await (await t.admin()).fetchTopicOffsets(topic))[0]!.high === high, { message: `high watermark ${high}` })
        expect(await (await t.admin()).fetchTopicOffsets(topic)).toEqual([{ partition: 0, offset: high, high, low: '0' }])
        const seen = await readAll(t, topic, 2)
        expect(seen.values()).toEqual(['a', 'b'])
      },
      { needs },
    )
  }
})

describe('consume-transform-produce (KafkaJS consumer spec "respects offsets sent by a committed transaction")', () => {
  contract(
    'offsets sent by a committed transaction are where the group continues; uncommittedOffsets keeps its shape',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic, fromBeginning: true })
      let consumed: KafkaMessage[] = []
      let perMessage: OffsetsByTopicPartition[] = []
      let current: (() => OffsetsByTopicPartition) | undefined
      const eachBatch = async ({ batch, uncommittedOffsets, heartbeat, resolveOffset }: EachBatchPayload) => {
        for (const message of batch.messages) {
          consumed.push(message)
          resolveOffset(message.offset)
          perMessage.push(uncommittedOffsets())
          current = uncommittedOffsets
        }
        await heartbeat()
      }
      await t.runAndJoin(consumer, { autoCommit: false, eachBatch })
      const producer = await txProducer(t)
      await producer.send({ topic, messages: messages(10).map((m) => ({ ...m, partition: 0 })) })
      await waitFor(() => consumed.length >= 10, { message: '10 messages' })
      expect(perMessage[7]).toEqual({ topics: [{ topic, partitions: [{ partition: '0', offset: '8' }] }] })

      const tx = await producer.transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: perMessage[7]!.topics })
      await tx.commit()
      await waitFor(async () => (await offsetsOf(t, groupId, topic))[0] === '8', { message: 'offset 8' })
      await consumer.stop()
      consumed = []
      perMessage = []
      await consumer.run({ autoCommit: false, eachBatch })
      await waitFor(() => consumed.length >= 2, { message: 'the two messages after the sent offset' })
      expect(consumed.map((m) => m.value?.toString())).toEqual(['m-8', 'm-9'])
      expect(current!()).toEqual({ topics: [{ topic, partitions: [{ partition: '0', offset: '10' }] }] })

      // a committed transaction's offsets count as committed for the consumer of the same client (KafkaJS marks them
      // committed in the client's cluster): uncommittedOffsets() is empty afterwards
      const second = await producer.transaction()
      await second.sendOffsets({ consumerGroupId: groupId, topics: current!().topics })
      await second.commit()
      expect(current!()).toEqual({ topics: [] })
      await waitFor(async () => (await offsetsOf(t, groupId, topic))[0] === '10', { message: 'offset 10' })
    },
    { needs },
  )

  contract(
    "sendOffsets counts for uncommittedOffsets() at once, also when the transaction aborts (the group's offsets do not move)",
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic, fromBeginning: true })
      let current: (() => OffsetsByTopicPartition) | undefined
      let seen = 0
      await t.runAndJoin(consumer, {
        autoCommit: false,
        eachBatch: async ({ batch, uncommittedOffsets, resolveOffset }: EachBatchPayload) => {
          for (const message of batch.messages) {
            resolveOffset(message.offset)
            seen++
          }
          current = uncommittedOffsets
        },
      })
      const producer = await txProducer(t)
      await producer.send({ topic, messages: messages(3).map((m) => ({ ...m, partition: 0 })) })
      await waitFor(() => seen >= 3, { message: '3 messages' })
      const pending = { topics: [{ topic, partitions: [{ partition: '0', offset: '3' }] }] }
      expect(current!()).toEqual(pending)
      const tx = await producer.transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: current!().topics })
      expect(current!()).toEqual({ topics: [] })
      await tx.abort()
      expect(current!()).toEqual({ topics: [] })
      expect(await offsetsOf(t, groupId, topic)).toEqual(['-1'])
    },
    { needs },
  )
})

describe('heartbeats (KafkaJS consumer spec "concurrent heartbeats are consolidated")', () => {
  contract('concurrent heartbeat() calls from concurrent partitions are consolidated and respect heartbeatInterval', async (t) => {
    const heartbeatInterval = 50
    const topic = await t.topic(10)
    const consumer = await t.consumer({ heartbeatInterval, maxWaitTimeInMs: 0 })
    await consumer.subscribe({ topic, fromBeginning: true })
    const beats: number[] = []
    consumer.on(consumer.events.HEARTBEAT, () => beats.push(Date.now()))
    let consumed = 0
    let calls = 0
    const joined = once((l) => consumer.on(consumer.events.GROUP_JOIN, l), { message: 'GROUP_JOIN' })
    await consumer.run({
      partitionsConsumedConcurrently: 5,
      eachBatch: async ({ batch, heartbeat }: EachBatchPayload) => {
        for (const _ of batch.messages) {
          calls += 2
          await Promise.all([heartbeat(), heartbeat()])
          await new Promise((r) => setTimeout(r, 1)) // the work of one message
          consumed++
        }
      },
    })
    await joined
    const started = Date.now()
    await (await t.producer()).send({ topic, messages: messages(200) })
    await waitFor(() => consumed >= 200, { message: '200 messages' })
    const elapsed = Date.now() - started
    expect(consumed).toBe(200)
    // KafkaJS sends a heartbeat only when heartbeatInterval has passed since the last one; calls in between share it
    for (let i = 1; i < beats.length; i++) expect(beats[i]! - beats[i - 1]!).toBeGreaterThanOrEqual(heartbeatInterval)
    expect(beats.length).toBeLessThanOrEqual(Math.floor(elapsed / heartbeatInterval) + 2)
    expect(beats.length).toBeLessThan(calls)
  })

  contract('heartbeat() from eachMessage is the only heartbeat before the handler returns (KafkaJS counts 1)', async (t) => {
    const topic = await t.topic(1)
    // KafkaJS's default maxWaitTimeInMs: an idle consumer heartbeats after each empty long poll, not every interval
    const consumer = await t.consumer({ heartbeatInterval: 50, maxWaitTimeInMs: 5000 })
    await consumer.subscribe({ topic, fromBeginning: true })
    let heartbeats = 0
    consumer.on(consumer.events.HEARTBEAT, () => heartbeats++)
    const consumed: KafkaMessage[] = []
    const joined = once((l) => consumer.on(consumer.events.GROUP_JOIN, l), { message: 'GROUP_JOIN' })
    await consumer.run({
      eachMessage: async ({ message, heartbeat }) => {
        await new Promise((r) => setTimeout(r, 100))
        await heartbeat()
        consumed.push(message)
        await new Promise((r) => setTimeout(r, 100))
      },
    })
    await joined
    await (await t.producer()).send({ topic, messages: [{ key: 'value', value: 'value' }] })
    await waitFor(() => consumed.length >= 1, { message: 'the message', interval: 5 })
    expect(heartbeats).toBe(1)
  })
})

describe('pause while a fetch is in flight (KafkaJS consumer spec "discards messages received when pausing")', () => {
  contract('pause() after FETCH_START: what that fetch returns is discarded, and FETCH still fires per fetch', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(10, 'first') })
    const consumer = await t.consumer({ maxWaitTimeInMs: 200 })
    await consumer.subscribe({ topic, fromBeginning: true })
    const consumed: string[] = []
    await consumer.run({
      eachBatch: async ({ batch, heartbeat }: EachBatchPayload) => {
        for (const message of batch.messages) consumed.push(message.value!.toString())
        await heartbeat()
      },
    })
    await waitFor(() => consumed.length === 10, { message: 'the first 10' })
    await once((l) => consumer.on(consumer.events.FETCH_START, l), { message: 'FETCH_START' })
    consumer.pause([{ topic }])
    await producer.send({ topic, messages: messages(10, 'second') })
    // every fetch ends with FETCH, also one with every partition paused (KafkaJS waits maxWaitTimeInMs and returns none)
    await once((l) => consumer.on(consumer.events.FETCH, l), { message: 'FETCH after the pause' })
    await once((l) => consumer.on(consumer.events.FETCH, l), { message: 'a second FETCH while paused' })
    expect(consumed).toHaveLength(10)
    consumer.resume([{ topic }])
    await waitFor(() => consumed.length === 20, { message: 'the second 10 after resume' })
    expect(consumed.slice(10)).toEqual(messages(10, 'second').map((m) => m.value))
  })

  contract('with every topic paused, eachMessage is never called and FETCH keeps firing', async (t) => {
    const [a, b] = [await t.topic(1), await t.topic(1)]
    const consumer = await t.consumer({ maxWaitTimeInMs: 100 })
    await consumer.subscribe({ topics: [a, b], fromBeginning: true })
    const seen: string[] = []
    await t.runAndJoin(consumer, { eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    consumer.pause([{ topic: a }, { topic: b }])
    const producer = await t.producer()
    await producer.send({ topic: a, messages: messages(1, 'a') })
    await producer.send({ topic: b, messages: messages(1, 'b') })
    for (let i = 0; i < 3; i++) await once((l) => consumer.on(consumer.events.FETCH, l), { message: `FETCH ${i} while paused` })
    expect(seen).toEqual([])
  })
})

const REQUEST_PAYLOAD = {
  apiKey: expect.any(Number),
  apiName: expect.any(String),
  apiVersion: expect.any(Number),
  broker: expect.any(String),
  clientId: 'compat',
  correlationId: expect.any(Number),
  createdAt: expect.any(Number),
  duration: expect.any(Number),
  pendingDuration: expect.any(Number),
  sentAt: expect.any(Number),
  size: expect.any(Number),
}

describe('instrumentation events (KafkaJS consumer spec "instrumentationEvents")', () => {
  contract('connect() of a consumer, a producer and an admin each emit a network.request named ApiVersions', async (t) => {
    const kafka = await t.kafka()
    const clients = [kafka.consumer({ groupId: uniqueName('group') }), kafka.producer(), kafka.admin()]
    for (const client of clients) {
      t.track(client)
      const seen: InstrumentationEvent<Record<string, unknown>>[] = []
      const on = client.on.bind(client) as (event: string, listener: (e: InstrumentationEvent<Record<string, unknown>>) => void) => unknown
      on(client.events.REQUEST, (e) => seen.push(e))
      await client.connect()
      const prefix = 'seek' in client ? 'consumer' : 'send' in client ? 'producer' : 'admin'
      expect(seen).toContainEqual({
        id: expect.any(Number),
        timestamp: expect.any(Number),
        type: `${prefix}.network.request`,
        payload: { ...REQUEST_PAYLOAD, apiKey: 18, apiName: 'ApiVersions' },
      })
    }
  })

  contract('received_unsubscribed_topics: the assignment names a topic this member did not subscribe to', async (t) => {
    const [a, b] = [uniqueName('a'), uniqueName('b')]
    await t.createTopics([
      { topic: a, numPartitions: 2 },
      { topic: b, numPartitions: 2 },
    ])
    const groupId = uniqueName('group')
    // KafkaJS's own round robin: the leader hands out its subscription's partitions to every member
    const partitionAssigners = [PartitionAssigners.roundRobin]
    const first = await t.consumer({ groupId, partitionAssigners })
    await first.subscribe({ topics: [a, b], fromBeginning: true })
    await t.runAndJoin(first, { eachMessage: async () => {} })
    const second = await t.consumer({ groupId, partitionAssigners })
    await second.subscribe({ topic: b, fromBeginning: true })
    const event = once<InstrumentationEvent<Record<string, unknown>>>((l) => second.on(second.events.RECEIVED_UNSUBSCRIBED_TOPICS, l as never), {
      message: 'RECEIVED_UNSUBSCRIBED_TOPICS',
    })
    await second.run({ eachMessage: async () => {} })
    expect(await event).toEqual({
      id: expect.any(Number),
      timestamp: expect.any(Number),
      type: 'consumer.received_unsubscribed_topics',
      payload: {
        groupId,
        generationId: expect.any(Number),
        memberId: expect.any(String),
        assignedTopics: [a, b],
        topicsSubscribed: [b],
        topicsNotSubscribed: [a],
      },
    })
  })

  contract(
    'an aborted transaction: Kafka hands its control-only batch to START/END_BATCH_PROCESS (batchSize 0), pgQueue has none',
    async (t) => {
      const topic = await t.topic(1)
      const consumer = await t.consumer({ maxWaitTimeInMs: 100 })
      await consumer.subscribe({ topic, fromBeginning: true })
      const starts: InstrumentationEvent<Record<string, unknown>>[] = []
      const ends: InstrumentationEvent<Record<string, unknown>>[] = []
      consumer.on(consumer.events.START_BATCH_PROCESS, (e) => starts.push(e as never))
      consumer.on(consumer.events.END_BATCH_PROCESS, (e) => ends.push(e as never))
      const seen: string[] = []
      await t.runAndJoin(consumer, { eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
      const tx = await (await txProducer(t)).transaction()
      await tx.send({ topic, acks: -1, messages: [{ key: 'test', value: 'test' }] })
      await tx.abort()
      const batch = { topic, partition: 0, offsetLag: expect.any(String), offsetLagLow: expect.any(String) }
      if (controlRecords) {
        await waitFor(() => ends.length > 0, { message: 'END_BATCH_PROCESS of the control batch' })
        expect(starts.map((e) => e.payload)).toEqual([{ ...batch, highWatermark: '2', batchSize: 0, firstOffset: '0', lastOffset: '1' }])
        expect(ends.map((e) => e.payload)).toEqual([
          { ...batch, highWatermark: '2', batchSize: 0, firstOffset: '0', lastOffset: '1', duration: expect.any(Number) },
        ])
      } else {
        // nothing of an aborted transaction is stored: the next message is the first batch, at offset 0
        await (await t.producer()).send({ topic, messages: [{ value: 'after' }] })
        await waitFor(() => ends.length > 0, { message: 'END_BATCH_PROCESS of the next message' })
        expect(starts.map((e) => e.payload)).toEqual([{ ...batch, highWatermark: '1', batchSize: 1, firstOffset: '0', lastOffset: '0' }])
      }
      expect(seen).toEqual(controlRecords ? [] : ['after'])
    },
    { needs },
  )
})

describe('readUncommitted (KafkaJS consumer spec "receives aborted messages for an isolation level of READ_UNCOMMITTED")', () => {
  contract(
    "a readUncommitted consumer: Kafka delivers an aborted transaction's messages, pgQueue never stores them (documented)",
    async (t) => {
      const topic = await t.topic(1)
      const consumer = await t.consumer({ readUncommitted: true, maxWaitTimeInMs: 100 })
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Collector()
      await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
      const tx = await (await txProducer(t)).transaction()
      await tx.sendBatch({ topicMessages: [{ topic, messages: messages(3, 'aborted') }] })
      await tx.abort()
      await (await t.producer()).send({ topic, messages: [{ value: 'after' }] })
      const expected = controlRecords ? ['aborted-0', 'aborted-1', 'aborted-2', 'after'] : ['after']
      await seen.waitForCount(expected.length)
      expect(seen.values()).toEqual(expected)
      // pgQueue stores nothing of the transaction (on Kafka the abort marker lands after EndTxn returned, before or
      // after the next message)
      if (!controlRecords) expect(seen.messages.at(-1)!.offset).toBe('0')
    },
    { needs },
  )
})

import type { Consumer, EachBatchPayload, InstrumentationEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, once, uniqueName, waitFor } from '../harness.js'

type Payload = Record<string, unknown>

/** Every event of `name` the client emits from now on. */
function record(client: { on(name: never, l: (e: InstrumentationEvent<Payload>) => void): () => void }, name: string) {
  const seen: InstrumentationEvent<Payload>[] = []
  client.on(name as never, (e) => seen.push(e))
  return seen
}

const REQUEST_PAYLOAD = {
  broker: expect.any(String),
  clientId: 'compat',
  correlationId: expect.any(Number),
  size: expect.any(Number),
  createdAt: expect.any(Number),
  sentAt: expect.any(Number),
  pendingDuration: expect.any(Number),
  duration: expect.any(Number),
  apiName: expect.any(String),
  apiKey: expect.any(Number),
  apiVersion: expect.any(Number),
}

/** A consumer of `topic` from the beginning, with its events recorded. */
async function consumerOf(t: Parameters<Parameters<typeof contract>[1]>[0], topic: string, config = {}) {
  const consumer = await t.consumer(config)
  await consumer.subscribe({ topic, fromBeginning: true })
  return consumer
}

const heartbeatsOf = (consumer: Consumer) => record(consumer as never, consumer.events.HEARTBEAT)

describe('network instrumentation events', () => {
  contract('producer.network.request is emitted for a send, with the KafkaJS payload and apiName Produce', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const requests = record(producer as never, producer.events.REQUEST)
    await producer.send({ topic, messages: messages(3) })
    const produce = requests.filter((e) => e.payload.apiName === 'Produce')
    expect(produce.length).toBeGreaterThan(0)
    expect(produce[0]!.type).toBe('producer.network.request')
    expect(produce[0]!.payload).toEqual(REQUEST_PAYLOAD)
    expect(produce[0]!.payload.apiKey).toBe(0)
    expect(produce[0]!.payload.size as number).toBeGreaterThan(0)
    expect(produce[0]!.payload.broker as string).toMatch(/:\d+$/)
  })

  contract('request correlation ids increase within a client', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const requests = record(producer as never, producer.events.REQUEST)
    await producer.send({ topic, messages: messages(1) })
    await producer.send({ topic, messages: messages(1) })
    const ids = requests.map((e) => e.payload.correlationId as number)
    expect(ids.length).toBeGreaterThanOrEqual(2)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })

  contract('admin.network.request names CreateTopics for createTopics', async (t) => {
    const admin = await t.admin()
    const requests = record(admin as never, admin.events.REQUEST)
    await admin.createTopics({ topics: [{ topic: uniqueName('events'), numPartitions: 1 }] })
    const create = requests.find((e) => e.payload.apiName === 'CreateTopics')
    expect(create?.type).toBe('admin.network.request')
    expect(create?.payload).toEqual(REQUEST_PAYLOAD)
    expect(create?.payload.apiKey).toBe(19)
  })

  contract('admin.network.request names OffsetFetch for fetchOffsets and ListOffsets for fetchTopicOffsets', async (t) => {
    const topic = await t.topic(1)
    const admin = await t.admin()
    const requests = record(admin as never, admin.events.REQUEST)
    await admin.fetchTopicOffsets(topic)
    await admin.fetchOffsets({ groupId: uniqueName('group'), topics: [topic] })
    const names = new Set(requests.map((e) => e.payload.apiName))
    expect(names.has('ListOffsets')).toBe(true)
    expect(names.has('OffsetFetch')).toBe(true)
  })

  contract('consumer.network.request names Fetch, Heartbeat and OffsetCommit', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(2) })
    const consumer = await consumerOf(t, topic)
    const requests = record(consumer as never, consumer.events.REQUEST)
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    await waitFor(() => ['Fetch', 'Heartbeat', 'OffsetCommit'].every((n) => requests.some((e) => e.payload.apiName === n)), {
      message: 'Fetch, Heartbeat and OffsetCommit requests',
    })
    const fetch = requests.find((e) => e.payload.apiName === 'Fetch')!
    expect(fetch.type).toBe('consumer.network.request')
    expect(fetch.payload).toEqual(REQUEST_PAYLOAD)
    expect(fetch.payload.apiKey).toBe(1)
  })

  contract('no network events reach a listener that was removed', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const seen: unknown[] = []
    const remove = producer.on(producer.events.REQUEST, (e) => seen.push(e))
    remove()
    await producer.send({ topic, messages: messages(1) })
    expect(seen).toEqual([])
  })
})

describe('consumer event payloads', () => {
  contract('consumer.heartbeat carries groupId, memberId and groupGenerationId', async (t) => {
    const topic = await t.topic(1)
    const consumer = await consumerOf(t, topic)
    const beat = once<InstrumentationEvent<Payload>>((l) => consumer.on(consumer.events.HEARTBEAT, l as never), { message: 'HEARTBEAT' })
    await consumer.run({ eachMessage: async () => {} })
    const { payload, type } = await beat
    expect(type).toBe('consumer.heartbeat')
    expect(payload).toEqual({ groupId: expect.any(String), memberId: expect.any(String), groupGenerationId: expect.any(Number) })
  })

  contract('consumer.commit_offsets carries the group, member, generation and committed topics', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(2) })
    const groupId = uniqueName('group')
    const consumer = await consumerOf(t, topic, { groupId })
    const commit = once<InstrumentationEvent<Payload>>((l) => consumer.on(consumer.events.COMMIT_OFFSETS, l as never), {
      message: 'COMMIT_OFFSETS',
    })
    await consumer.run({ eachMessage: async () => {} })
    const { payload } = await commit
    expect(payload).toEqual({
      groupId,
      memberId: expect.any(String),
      groupGenerationId: expect.any(Number),
      // KafkaJS builds the list from object keys: the partition is a string there
      topics: [{ topic, partitions: [{ partition: '0', offset: '2' }] }],
    })
  })

  contract("start_batch_process and end_batch_process carry KafkaJS's batch fields", async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(3) })
    const consumer = await consumerOf(t, topic)
    const starts = record(consumer as never, consumer.events.START_BATCH_PROCESS)
    const ends = record(consumer as never, consumer.events.END_BATCH_PROCESS)
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(3)
    await waitFor(() => ends.length > 0, { message: 'END_BATCH_PROCESS' })
    const batchFields = {
      topic,
      partition: 0,
      highWatermark: expect.any(String),
      offsetLag: expect.any(String),
      offsetLagLow: expect.any(String),
      batchSize: expect.any(Number),
      firstOffset: expect.any(String),
      lastOffset: expect.any(String),
    }
    expect(starts[0]!.payload).toEqual(batchFields)
    expect(ends[0]!.payload).toEqual({ ...batchFields, duration: expect.any(Number) })
    expect(ends[0]!.payload.firstOffset).toBe('0')
    const total = ends.reduce((n, e) => n + (e.payload.batchSize as number), 0)
    expect(total).toBe(3)
  })

  contract('start_batch_process values describe the batch: sizes, offsets and lag', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(4) })
    const consumer = await consumerOf(t, topic)
    const starts = record(consumer as never, consumer.events.START_BATCH_PROCESS)
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(4)
    const first = starts[0]!.payload
    const size = first.batchSize as number
    expect(first.highWatermark).toBe('4')
    expect(first.lastOffset).toBe(String(size - 1))
    expect(first.offsetLag).toBe(String(4 - 1 - (size - 1)))
    expect(first.offsetLagLow).toBe(String(4 - 1 - 0))
  })

  contract('consumer.rebalancing carries groupId and memberId when a second member joins', async (t) => {
    const topic = await t.topic(2)
    const groupId = uniqueName('group')
    const first = await consumerOf(t, topic, { groupId })
    await t.runAndJoin(first, { eachMessage: async () => {} })
    const rebalancing = once<InstrumentationEvent<Payload>>((l) => first.on(first.events.REBALANCING, l as never), {
      message: 'REBALANCING',
    })
    const second = await consumerOf(t, topic, { groupId })
    await second.run({ eachMessage: async () => {} })
    const { payload, type } = await rebalancing
    expect(type).toBe('consumer.rebalancing')
    expect(payload).toEqual({ groupId, memberId: expect.any(String) })
  })

  contract('heartbeat() inside a batch respects heartbeatInterval', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(1) })
    const consumer = await consumerOf(t, topic, { sessionTimeout: 30_000, heartbeatInterval: 20_000 })
    const beats = heartbeatsOf(consumer)
    let done = false
    let before = -1
    await consumer.run({
      eachBatch: async ({ heartbeat }: EachBatchPayload) => {
        before = beats.length
        for (let i = 0; i < 5; i++) await heartbeat()
        done = true
      },
    })
    await waitFor(() => done, { message: 'the batch' })
    // the join's own heartbeat is recent: none of the five was due
    expect(beats.length).toBe(before)
  })

  contract('concurrent heartbeat() calls are consolidated into one', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(1) })
    const consumer = await consumerOf(t, topic, { heartbeatInterval: 0 })
    const beats = heartbeatsOf(consumer)
    let added = -1
    await consumer.run({
      eachBatch: async ({ heartbeat }: EachBatchPayload) => {
        const before = beats.length
        await Promise.all([heartbeat(), heartbeat(), heartbeat(), heartbeat()])
        added = beats.length - before
      },
    })
    await waitFor(() => added >= 0, { message: 'the batch' })
    expect(added).toBe(1)
  })
})

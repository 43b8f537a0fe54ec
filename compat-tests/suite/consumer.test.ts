import kafkajs from 'kafkajs'
import type { ConsumerCrashEvent, ConsumerEndBatchProcessEvent, ConsumerCommitOffsetsEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, once, uniqueName, waitFor } from '../harness.js'

const { KafkaJSNonRetriableError } = kafkajs

describe('consumer: eachMessage and offsets', () => {
  contract('fromBeginning: true delivers earlier messages in order with key, value and offset', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5, 'm', ['k']) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    const got = await seen.waitForCount(5)
    expect(got.map((m) => [m.key, m.value, m.offset, m.topic, m.partition])).toEqual([0, 1, 2, 3, 4].map((i) => ['k', `m-${i}`, String(i), topic, 0]))
  })

  contract('fromBeginning: false delivers only messages produced after the group joined', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(6, 'old', ['a', 'b', 'c']) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: false })
    const seen = new Collector()
    await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
    await producer.send({ topic, messages: messages(4, 'new', ['a', 'b', 'c']) })
    await seen.waitForCount(4)
    expect(seen.values().sort()).toEqual(['new-0', 'new-1', 'new-2', 'new-3'])
  })

  contract('a restarted group resumes after its committed offset', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5, 'first') })
    const first = await t.consumer({ groupId })
    await first.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await first.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(5)
    await first.disconnect()

    await producer.send({ topic, messages: messages(3, 'second') })
    const second = await t.consumer({ groupId })
    await second.subscribe({ topic, fromBeginning: true })
    const after = new Collector()
    await second.run({ eachMessage: after.eachMessage })
    const got = await after.waitForCount(3)
    expect(got.map((m) => m.value)).toEqual(['second-0', 'second-1', 'second-2'])
    expect(got[0]!.offset).toBe('5')
  })

  contract('autoCommit: false commits only what commitOffsets commits', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5) })
    const first = await t.consumer({ groupId })
    await first.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await first.run({ autoCommit: false, eachMessage: seen.eachMessage })
    await seen.waitForCount(5)
    await first.commitOffsets([{ topic, partition: 0, offset: '3' }])
    const admin = await t.admin()
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
    expect(committed!.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '3' })])
    await first.disconnect()

    const second = await t.consumer({ groupId })
    await second.subscribe({ topic, fromBeginning: true })
    const again = new Collector()
    await second.run({ autoCommit: false, eachMessage: again.eachMessage })
    const got = await again.waitForCount(2)
    expect(got.map((m) => m.offset)).toEqual(['3', '4'])
  })

  contract('autoCommit: false without a commit replays everything on restart', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    for (let round = 0; round < 2; round++) {
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Collector()
      await consumer.run({ autoCommit: false, eachMessage: seen.eachMessage })
      expect((await seen.waitForCount(3)).map((m) => m.offset)).toEqual(['0', '1', '2'])
      await consumer.disconnect()
    }
    const [offsets] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
    expect(offsets!.partitions[0]!.offset).toBe('-1')
  })

  contract('seek replays a partition from the given offset', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(5)
    consumer.seek({ topic, partition: 0, offset: '2' })
    const got = await seen.waitForCount(8)
    expect(got.slice(5).map((m) => m.value)).toEqual(['m-2', 'm-3', 'm-4'])
  })

  contract('pause holds back a partition, paused() lists it, resume delivers the held messages', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
    consumer.pause([{ topic, partitions: [0] }])
    expect(consumer.paused()).toEqual([{ topic, partitions: [0] }])
    await producer.send({ topic, messages: [{ value: 'held', partition: 0 }] })
    await producer.send({ topic, messages: [{ value: 'flows', partition: 1 }] })
    await seen.waitForCount(1)
    // 'held' was written first; while paused only partition 1 may be delivered
    await producer.send({ topic, messages: [{ value: 'flows-too', partition: 1 }] })
    await seen.waitForCount(2)
    expect(seen.values()).toEqual(['flows', 'flows-too'])
    consumer.resume([{ topic, partitions: [0] }])
    expect(consumer.paused()).toEqual([])
    await seen.waitForCount(3)
    expect(seen.messages[2]).toMatchObject({ value: 'held', partition: 0 })
  })

  contract('pausing a whole topic (no partitions) stops all its partitions until resumed', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
    consumer.pause([{ topic }])
    expect(consumer.paused()).toEqual([{ topic, partitions: [0, 1] }])
    await producer.send({
      topic,
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 1 },
      ],
    })
    consumer.resume([{ topic }])
    await seen.waitForCount(2)
    expect(seen.values().sort()).toEqual(['a', 'b'])
  })

  contract('pause() from the eachMessage payload returns a resume function', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(2) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    let resume: (() => void) | undefined
    await consumer.run({
      eachMessage: async (payload) => {
        if (!resume) {
          resume = payload.pause()
          throw new Error('not now') // leaves the message unresolved
        }
        await seen.eachMessage(payload)
      },
    })
    await waitFor(() => consumer.paused().length > 0, { message: 'partition paused' })
    expect(consumer.paused()).toEqual([{ topic, partitions: [0] }])
    resume!()
    const got = await seen.waitForCount(2)
    expect(got.map((m) => m.value)).toEqual(['m-0', 'm-1'])
  })

  contract('stop() then run() again continues after the committed position', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(2, 'before') })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    await consumer.stop()
    await producer.send({ topic, messages: messages(2, 'after') })
    await consumer.run({ eachMessage: seen.eachMessage })
    const got = await seen.waitForCount(4)
    expect(got.map((m) => m.value)).toEqual(['before-0', 'before-1', 'after-0', 'after-1'])
  })

  contract('a handler error redelivers the failed message, then continues in order', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const attempts: string[] = []
    const seen = new Collector()
    await consumer.run({
      eachMessage: async (payload) => {
        const value = String(payload.message.value)
        attempts.push(value)
        if (value === 'm-1' && attempts.filter((v) => v === 'm-1').length === 1) throw new Error('transient')
        await seen.eachMessage(payload)
      },
    })
    await seen.waitForCount(3)
    expect(seen.values()).toEqual(['m-0', 'm-1', 'm-2'])
    expect(attempts.filter((v) => v === 'm-1')).toHaveLength(2)
  })

  contract('partitionsConsumedConcurrently runs handlers of different partitions at the same time', async (t) => {
    const topic = await t.topic(3)
    const producer = await t.producer()
    for (const partition of [0, 1, 2]) {
      await producer.send({ topic, messages: messages(4, `p${partition}`).map((m) => ({ ...m, partition })) })
    }
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    let inFlight = 0
    let maxInFlight = 0
    const started = new Set<number>()
    await consumer.run({
      partitionsConsumedConcurrently: 3,
      eachMessage: async (payload) => {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        started.add(payload.partition)
        // the first handler waits until another partition's handler has started: needs concurrency
        await waitFor(() => started.size > 1, { timeout: 15_000, message: 'a second partition handler' })
        await seen.eachMessage(payload)
        inFlight--
      },
    })
    await seen.waitForCount(12)
    expect(maxInFlight).toBeGreaterThan(1)
    for (const [partition, got] of seen.byPartition()) {
      expect(got.map((m) => m.value)).toEqual([0, 1, 2, 3].map((i) => `p${partition}-${i}`))
    }
  })

  contract('GROUP_JOIN reports the group, the member and its assignment', async (t) => {
    const topic = await t.topic(3)
    const groupId = uniqueName('group')
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic })
    const event = await t.runAndJoin(consumer, { eachMessage: async () => {} })
    expect(event.type).toBe(consumer.events.GROUP_JOIN)
    expect(event.payload.groupId).toBe(groupId)
    expect(event.payload.memberId).toEqual(expect.any(String))
    expect(event.payload.memberId.length).toBeGreaterThan(0)
    expect(event.payload.isLeader).toBe(true)
    expect(Object.keys(event.payload.memberAssignment)).toEqual([topic])
    expect([...event.payload.memberAssignment[topic]!].sort()).toEqual([0, 1, 2])
  })

  contract('END_BATCH_PROCESS reports each processed batch', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(4) })
    const consumer = await t.consumer()
    const events: ConsumerEndBatchProcessEvent[] = []
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => void events.push(e))
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(4)
    await waitFor(() => events.reduce((n, e) => n + e.payload.batchSize, 0) >= 4, { message: 'END_BATCH_PROCESS for 4' })
    const first = events[0]!.payload
    expect(first).toMatchObject({ topic, partition: 0, firstOffset: '0' })
    expect(first.duration).toEqual(expect.any(Number))
    expect(events.at(-1)!.payload.lastOffset).toBe('3')
  })

  contract('COMMIT_OFFSETS reports the committed offsets of the group', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const consumer = await t.consumer({ groupId })
    const commits: ConsumerCommitOffsetsEvent[] = []
    consumer.on(consumer.events.COMMIT_OFFSETS, (e) => void commits.push(e))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => {} })
    const committedAll = () => commits.some((c) => c.payload.topics.some((tp) => tp.topic === topic && tp.partitions.some((p) => p.offset === '3')))
    await waitFor(committedAll, { message: 'COMMIT_OFFSETS with offset 3' })
    expect(commits[0]!.payload.groupId).toBe(groupId)
  })

  contract('CRASH is emitted with restart: false when a handler throws a non-retriable error', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(1) })
    const consumer = await t.consumer({ groupId })
    const crashed = once<ConsumerCrashEvent>((l) => consumer.on(consumer.events.CRASH, l), { message: 'CRASH' })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async () => {
        throw new KafkaJSNonRetriableError('poison')
      },
    })
    const { payload } = await crashed
    expect(payload.groupId).toBe(groupId)
    expect(payload.restart).toBe(false)
    expect(payload.error).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(payload.error.message).toContain('poison')
  })
})

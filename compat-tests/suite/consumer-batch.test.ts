import type { Batch, EachBatchPayload } from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract, messages, toReceived, uniqueName, waitFor, type Received } from '../harness.js'

const lag = (high: string, offset: string) => String(BigInt(high) - 1n - BigInt(offset))

describe('consumer: eachBatch', () => {
  contract('batch accessors: firstOffset, lastOffset, highWatermark, offsetLag, isEmpty', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const batches: Batch[] = []
    await consumer.run({ eachBatch: async ({ batch }) => void (batch.isEmpty() || batches.push(batch)) })
    await waitFor(() => batches.reduce((n, b) => n + b.messages.length, 0) >= 5, { message: '5 messages in batches' })
    for (const b of batches) {
      expect(b.topic).toBe(topic)
      expect(b.partition).toBe(0)
      expect(b.firstOffset()).toBe(b.messages[0]!.offset)
      expect(b.lastOffset()).toBe(b.messages.at(-1)!.offset)
      expect(b.offsetLag()).toBe(lag(b.highWatermark, b.lastOffset()))
      expect(b.offsetLagLow()).toBe(lag(b.highWatermark, b.firstOffset()!))
    }
    expect(batches[0]!.firstOffset()).toBe('0')
    const last = batches.at(-1)!
    expect(last.lastOffset()).toBe('4')
    expect(last.highWatermark).toBe('5')
    expect(last.offsetLag()).toBe('0')
  })

  contract('with eachBatchAutoResolve: false only resolveOffset-ed messages are committed', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5) })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    let sawTail = false
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset }) => {
        for (const m of batch.messages) {
          if (Number(m.offset) <= 2) resolveOffset(m.offset)
          else sawTail = true
        }
      },
    })
    await waitFor(() => sawTail, { message: 'a batch beyond offset 2' })
    await consumer.disconnect()
    const [committed] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
    expect(committed!.partitions[0]!.offset).toBe('3')
  })

  contract('uncommittedOffsets() lists resolved offsets that are not committed yet', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    let uncommitted: ReturnType<EachBatchPayload['uncommittedOffsets']> | undefined
    let resolved = ''
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset, uncommittedOffsets }) => {
        if (uncommitted || batch.isEmpty()) return
        resolved = batch.lastOffset()
        resolveOffset(resolved)
        uncommitted = uncommittedOffsets()
      },
    })
    await waitFor(() => uncommitted !== undefined, { message: 'a batch' })
    const entry = uncommitted!.topics.find((x) => x.topic === topic)!
    // KafkaJS itself hands out the partition as a string here, so compare numerically
    expect(entry.partitions.map((p) => [Number(p.partition), p.offset])).toEqual([[0, String(Number(resolved) + 1)]])
  })

  contract('commitOffsetsIfNecessary() commits mid-batch once autoCommitThreshold is reached', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(4) })
    const admin = await t.admin()
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    let midBatch: string | undefined
    await consumer.run({
      autoCommitThreshold: 1,
      eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
        if (midBatch || batch.isEmpty()) return
        resolveOffset(batch.messages[0]!.offset)
        await commitOffsetsIfNecessary()
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
        midBatch = committed!.partitions[0]!.offset
      },
    })
    await waitFor(() => midBatch !== undefined, { message: 'the handler to check offsets' })
    expect(midBatch).toBe('1')
  })

  contract('commitOffsetsIfNecessary(offsets) commits exactly the given offsets', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(4) })
    const admin = await t.admin()
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    let midBatch: string | undefined
    await consumer.run({
      eachBatch: async ({ batch, commitOffsetsIfNecessary }) => {
        if (midBatch || batch.isEmpty()) return
        await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition: 0, offset: '2' }] }] })
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
        midBatch = committed!.partitions[0]!.offset
      },
    })
    await waitFor(() => midBatch !== undefined, { message: 'the handler to check offsets' })
    expect(midBatch).toBe('2')
  })

  contract('heartbeat() resolves, isRunning() is true and isStale() false in a normal batch', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(2) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    let state: { running: boolean; stale: boolean } | undefined
    await consumer.run({
      eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
        if (state || batch.isEmpty()) return
        await heartbeat()
        state = { running: isRunning(), stale: isStale() }
      },
    })
    await waitFor(() => state !== undefined, { message: 'a batch' })
    expect(state).toEqual({ running: true, stale: false })
  })

  contract('isRunning() turns false once stop() has begun', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(2) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    let stopping: Promise<void> | undefined
    let runningAfterStop: boolean | undefined
    await consumer.run({
      eachBatch: async ({ batch, isRunning }) => {
        if (stopping || batch.isEmpty()) return
        stopping = consumer.stop() // completes only after this handler returns
        await waitFor(() => !isRunning(), { timeout: 10_000, message: 'isRunning() === false' })
        runningAfterStop = isRunning()
      },
    })
    await waitFor(() => stopping !== undefined, { message: 'a batch' })
    await stopping
    expect(runningAfterStop).toBe(false)
  })

  contract('isStale() is true after seek() on the batch partition', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const firstOffsets: string[] = []
    let staleAfterSeek: boolean | undefined
    await consumer.run({
      eachBatch: async ({ batch, isStale }) => {
        if (batch.isEmpty()) return
        firstOffsets.push(batch.firstOffset()!)
        if (staleAfterSeek === undefined) {
          consumer.seek({ topic, partition: 0, offset: '0' })
          staleAfterSeek = isStale()
        }
      },
    })
    await waitFor(() => firstOffsets.length >= 2, { message: 'the batch after seek' })
    expect(staleAfterSeek).toBe(true)
    expect(firstOffsets[1]).toBe('0')
  })

  contract('an eachBatch error redelivers the unresolved messages', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    let failures = 0
    const done: Received[] = []
    await consumer.run({
      eachBatch: async ({ batch }) => {
        if (batch.isEmpty()) return
        if (failures++ === 0) throw new Error('transient')
        done.push(...batch.messages.map((m) => toReceived(batch.topic, batch.partition, m)))
      },
    })
    await waitFor(() => done.length >= 3, { message: '3 messages after the failure' })
    expect(done.slice(0, 3).map((m) => m.value)).toEqual(['m-0', 'm-1', 'm-2'])
  })

  contract('eachBatch delivers every partition in order', async (t) => {
    const topic = await t.topic(3)
    const producer = await t.producer()
    const keys = ['a', 'b', 'c', 'd', 'e']
    await producer.send({ topic, messages: messages(30, 'm', keys) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const got: Received[] = []
    await consumer.run({
      eachBatch: async ({ batch }) => void got.push(...batch.messages.map((m) => toReceived(batch.topic, batch.partition, m))),
    })
    await waitFor(() => got.length >= 30, { message: '30 messages' })
    for (const key of keys) {
      expect(got.filter((m) => m.key === key).map((m) => m.value)).toEqual(
        messages(30, 'm', keys)
          .filter((m) => m.key === key)
          .map((m) => m.value),
      )
    }
  })
})

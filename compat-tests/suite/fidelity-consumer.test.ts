import type { EachBatchPayload, InstrumentationEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, once, uniqueName, waitFor } from '../harness.js'

describe('consumer fidelity', () => {
  contract('heartbeatInterval: 0 and maxWaitTimeInMs: 0 are valid and the consumer delivers', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(2) })
    const consumer = await t.consumer({ heartbeatInterval: 0, maxWaitTimeInMs: 0 })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    expect(seen.values()).toEqual(['m-0', 'm-1'])
  })

  contract('run() not awaited: seek() right away is accepted and honoured', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(5) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    const running = consumer.run({ eachMessage: seen.eachMessage })
    consumer.seek({ topic, partition: 0, offset: '3' })
    await running
    await seen.waitForCount(2)
    expect(seen.messages[0]!.offset).toBe('3')
  })

  contract('run() not awaited: pause() right away is accepted and holds the topic back', async (t) => {
    const [held, live] = [await t.topic(1), await t.topic(1)]
    const producer = await t.producer()
    await producer.send({ topic: held, messages: messages(2, 'held') })
    const consumer = await t.consumer()
    await consumer.subscribe({ topics: [held, live], fromBeginning: true })
    const seen = new Collector()
    const running = consumer.run({ eachMessage: seen.eachMessage })
    consumer.pause([{ topic: held }])
    await running
    // `live` is written after `held`: once its message arrives, the paused topic was passed over
    await producer.send({ topic: live, messages: messages(1, 'live') })
    await seen.waitForCount(1)
    expect(seen.values()).toEqual(['live-0'])
    consumer.resume([{ topic: held }])
    await seen.waitForCount(3)
    expect(seen.values().slice(1)).toEqual(['held-0', 'held-1'])
  })

  contract('run() not awaited: resume() right away is accepted', async (t) => {
    const topic = await t.topic(1)
    await (await t.producer()).send({ topic, messages: messages(1) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    const running = consumer.run({ eachMessage: seen.eachMessage })
    consumer.resume([{ topic }])
    await running
    await seen.waitForCount(1)
  })

  contract("pausing while a fetch is in flight discards that fetch's messages of the paused partition", async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [...messages(3, 'p0').map((m) => ({ ...m, partition: 0 })), ...messages(3, 'p1').map((m) => ({ ...m, partition: 1 }))],
    })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    let paused = false
    consumer.on(consumer.events.FETCH_START, () => {
      if (paused) return
      paused = true
      consumer.pause([{ topic, partitions: [0] }])
    })
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(3)
    await once((l) => consumer.on(consumer.events.FETCH, l), { message: 'a later FETCH' })
    expect(seen.messages.every((m) => m.partition === 1)).toBe(true)
    consumer.resume([{ topic, partitions: [0] }])
    await seen.waitForCount(6)
    expect(seen.messages.filter((m) => m.partition === 0).map((m) => m.value)).toEqual(['p0-0', 'p0-1', 'p0-2'])
  })

  contract('pause() from eachBatch stops the rest of that partition until resumed', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3, 'p0').map((m) => ({ ...m, partition: 0 })) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, pause }: EachBatchPayload) => {
        const first = batch.messages[0]!
        seen.push(`${batch.partition}:${first.offset}`)
        resolveOffset(first.offset)
        if (batch.partition === 0) pause()
      },
    })
    await waitFor(() => seen.length > 0, { message: 'the first batch' })
    // partition 1 is written after the pause: once it is delivered, partition 0 had its chance and was held back
    await producer.send({ topic, messages: [{ value: 'p1', partition: 1 }] })
    await waitFor(() => seen.includes('1:0'), { message: 'partition 1' })
    expect(seen.filter((s) => s.startsWith('0:'))).toEqual(['0:0'])
    expect(consumer.paused()).toEqual([{ topic, partitions: [0] }])
  })

  contract('received_unsubscribed_topics is not emitted for a member whose assignment matches its subscription', async (t) => {
    const topic = await t.topic(2)
    const consumer = await t.consumer()
    const events: InstrumentationEvent<unknown>[] = []
    consumer.on(consumer.events.RECEIVED_UNSUBSCRIBED_TOPICS, (e) => events.push(e))
    await consumer.subscribe({ topic })
    await t.runAndJoin(consumer, { eachMessage: async () => {} })
    expect(events).toEqual([])
  })

  contract('consumer.stop() resolves and a later run() delivers again', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(1, 'first') })
    const groupId = uniqueName('group')
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(1)
    await consumer.stop()
    await producer.send({ topic, messages: messages(1, 'second') })
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    expect(seen.values()).toEqual(['first-0', 'second-0'])
  })
})

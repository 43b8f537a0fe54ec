// The dead-letter extension's eachBatch wrapper and its non-blocking retry-topics mode behave the same on both
// transports (dead-letter.test.ts covers eachMessage in the default blocking mode).
import type { EachBatchHandler, Kafka } from 'kafkajs'
import { describe, expect } from 'vitest'
import { deadLetter, DLT_HEADERS, RETRY_HEADERS, type DeadLetterEvent, type DeadLetterOptions } from '../../src/index.js'
import { Collector, contract, once, toReceived, uniqueName, waitFor, type Scope } from '../harness.js'

const FAST_BACKOFF = { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 }

/** A handler over messages that fails for the values in `failing` (a count per value, Infinity = always). */
function failingHandler(failing: Record<string, number>, calls: string[], handled: Collector) {
  return async (topic: string, partition: number, message: Parameters<Collector['eachMessage']>[0]['message']) => {
    const value = message.value!.toString()
    calls.push(value)
    if ((failing[value] ?? 0) > 0) {
      failing[value]!--
      throw new TypeError(`cannot handle ${value}`)
    }
    handled.push(toReceived(topic, partition, message))
  }
}

async function handlerFor(t: Scope, options: Omit<DeadLetterOptions, 'backoff'> & { backoff?: DeadLetterOptions['backoff'] }) {
  const dl = deadLetter((await t.kafka()) as Kafka, { maxAttempts: 3, backoff: FAST_BACKOFF, ...options })
  const events: DeadLetterEvent[] = []
  dl.on(dl.events.RETRY, (e) => events.push(e))
  dl.on(dl.events.DEAD_LETTER, (e) => events.push(e))
  await dl.connect()
  return { dl, events }
}

/** The first `n` messages of `topic`, headers as text. */
async function read(t: Scope, topic: string, n: number) {
  const reader = await t.consumer()
  await reader.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await reader.run({ eachMessage: seen.eachMessage })
  return (await seen.waitForCount(n)).map((m) => ({ ...m, headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, String(v)])) }))
}

async function committed(t: Scope, groupId: string, topic: string, offset: string) {
  const admin = await t.admin()
  await waitFor(
    async () => {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] })
      return offsets!.partitions[0]!.offset === offset
    },
    { message: `committed offset ${offset}` },
  )
}

describe('dead-letter eachBatch', () => {
  contract('a poison message inside a batch is retried, dead-lettered, and the rest of the batch handled in order', async (t) => {
    const topic = await t.topic(1, 'dlqb_src')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: ['m0', 'bad', 'm2', 'm3'].map((value) => ({ key: 'k', value })) })
    const groupId = uniqueName('dlqb_group')
    const { dl, events } = await handlerFor(t, { groupId, topic: `${topic}.dlq` })
    const calls: string[] = []
    const handled = new Collector()
    const each = failingHandler({ bad: Infinity }, calls, handled)
    const batchHandler: EachBatchHandler = async ({ batch, resolveOffset, heartbeat }) => {
      for (const message of batch.messages) {
        await each(batch.topic, batch.partition, message)
        resolveOffset(message.offset)
        await heartbeat()
      }
    }
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachBatch: dl.eachBatch(batchHandler) })

    await handled.waitForCount(3)
    expect(handled.messages.map((m) => m.value)).toEqual(['m0', 'm2', 'm3'])
    // m0 was resolved before the failure: it is not handled again
    expect(calls).toEqual(['m0', 'bad', 'bad', 'bad', 'm2', 'm3'])
    expect(events.map((e) => [e.type, e.payload.offset, e.payload.attempts])).toEqual([
      ['dead_letter.retry', '1', 1],
      ['dead_letter.retry', '1', 2],
      ['dead_letter.dead_lettered', '1', 3],
    ])
    const [dead] = await read(t, `${topic}.dlq`, 1)
    expect(dead).toMatchObject({ value: 'bad', headers: { [DLT_HEADERS.topic]: topic, [DLT_HEADERS.offset]: '1', [DLT_HEADERS.attempts]: '3' } })
    await committed(t, groupId, topic, '4')
    await dl.disconnect()
  })

  contract('a batch message that succeeds on a retry is handled once more and never dead-lettered', async (t) => {
    const topic = await t.topic(1, 'dlqb_flaky')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'flaky' }, { value: 'after' }] })
    const groupId = uniqueName('dlqb_flaky_group')
    const { dl, events } = await handlerFor(t, { groupId, topic: `${topic}.dlq` })
    const calls: string[] = []
    const handled = new Collector()
    const each = failingHandler({ flaky: 2 }, calls, handled)
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    // no resolveOffset: the first message of the batch is taken as the failing one, as it is here
    await consumer.run({
      eachBatch: dl.eachBatch(async ({ batch }) => {
        for (const message of batch.messages) await each(batch.topic, batch.partition, message)
      }),
    })
    await handled.waitForCount(2)
    expect(calls).toEqual(['flaky', 'flaky', 'flaky', 'after'])
    expect(events.map((e) => e.type)).toEqual(['dead_letter.retry', 'dead_letter.retry'])
    await committed(t, groupId, topic, '2')
    const admin = await t.admin()
    expect((await admin.fetchTopicOffsets(`${topic}.dlq`))[0]!.high).toBe('0')
    await dl.disconnect()
  })
})

describe('dead-letter retry-topics mode', () => {
  contract(
    'a failing message goes to a retry topic at once and the partition moves on; the retry consumer dead-letters it after maxAttempts',
    async (t) => {
      const topic = await t.topic(1, 'dlqr_src')
      const groupId = uniqueName('dlqr_group')
      const options = { topic: `${topic}.dlq`, mode: 'retry-topics' as const, backoff: { initialMs: 30, maxMs: 60, factor: 2, jitter: 0 } }
      const main = await handlerFor(t, { ...options, groupId })
      const retryTopics = main.dl.retryTopics(topic)
      expect(retryTopics).toEqual([`${topic}.retry-1`, `${topic}.retry-2`])
      await t.createTopics([`${topic}.dlq`, ...retryTopics].map((name) => ({ topic: name, numPartitions: 1 })))
      const producer = await t.producer()
      await producer.send({ topic, messages: ['m0', 'bad', 'm2'].map((value) => ({ key: 'k', value, headers: { trace: 'abc' } })) })

      const calls: string[] = []
      const handled = new Collector()
      const each = failingHandler({ bad: Infinity }, calls, handled)
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({ eachMessage: main.dl.eachMessage(async (p) => each(p.topic, p.partition, p.message)) })
      // the main partition does not wait: m2 is handled after one failure of bad, and everything is committed
      await handled.waitForCount(2)
      expect(calls).toEqual(['m0', 'bad', 'm2'])
      await committed(t, groupId, topic, '3')
      expect(main.events.map((e) => [e.type, e.payload.attempts, e.payload.retryTopic])).toEqual([['dead_letter.retry', 1, `${topic}.retry-1`]])
      const [hop] = await read(t, `${topic}.retry-1`, 1)
      expect(hop).toMatchObject({
        key: 'k',
        value: 'bad',
        headers: {
          trace: 'abc',
          [DLT_HEADERS.topic]: topic,
          [DLT_HEADERS.offset]: '1',
          [DLT_HEADERS.attempts]: '1',
          [DLT_HEADERS.errorClass]: 'TypeError',
        },
      })
      expect(Number(hop!.headers[RETRY_HEADERS.notBefore])).toBeGreaterThan(0)

      // the retry topics have a consumer of their own (its own group), so their waits never hold the main topic
      const retryGroup = `${groupId}.retry`
      const retry = await handlerFor(t, { ...options, groupId: retryGroup })
      const retryConsumer = await t.consumer({ groupId: retryGroup })
      await retryConsumer.subscribe({ topics: retryTopics, fromBeginning: true })
      const deadLettered = once<DeadLetterEvent>((l) => retry.dl.on(retry.dl.events.DEAD_LETTER, (e) => l(e)), { message: 'dead-lettered' })
      await retryConsumer.run({ eachMessage: retry.dl.eachMessage(async (p) => each(p.topic, p.partition, p.message)) })
      const event = await deadLettered
      expect(calls).toEqual(['m0', 'bad', 'm2', 'bad', 'bad'])
      expect(retry.events.map((e) => [e.type, e.payload.topic, e.payload.attempts])).toEqual([
        ['dead_letter.retry', `${topic}.retry-1`, 2],
        ['dead_letter.dead_lettered', `${topic}.retry-2`, 3],
      ])
      expect(event.payload.deadLetterTopic).toBe(`${topic}.dlq`)
      // the dead letter names where the message was first sent, not the retry topic
      const [dead] = await read(t, `${topic}.dlq`, 1)
      expect(dead!.headers).toMatchObject({
        trace: 'abc',
        [DLT_HEADERS.topic]: topic,
        [DLT_HEADERS.partition]: '0',
        [DLT_HEADERS.offset]: '1',
        [DLT_HEADERS.attempts]: '3',
        [DLT_HEADERS.group]: groupId,
      })
      expect(dead!.headers[RETRY_HEADERS.notBefore]).toBeUndefined()
      await committed(t, retryGroup, `${topic}.retry-2`, '1')
      await Promise.all([main.dl.disconnect(), retry.dl.disconnect()])
    },
  )

  contract('retry-topics with eachBatch: a message that succeeds on its retry is handled from the retry topic, nothing dead-lettered', async (t) => {
    const topic = await t.topic(1, 'dlqr_batch')
    const groupId = uniqueName('dlqr_batch_group')
    const options = { topic: `${topic}.dlq`, mode: 'retry-topics' as const, maxAttempts: 2 }
    const dl = await handlerFor(t, { ...options, groupId })
    await t.createTopics([`${topic}.dlq`, ...dl.dl.retryTopics(topic)].map((name) => ({ topic: name, numPartitions: 1 })))
    const producer = await t.producer()
    await producer.send({ topic, messages: ['a', 'flaky', 'b'].map((value) => ({ value })) })
    const calls: string[] = []
    const handled = new Collector()
    const each = failingHandler({ flaky: 1 }, calls, handled)
    // one consumer for both here: the main topic and its retry topic
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topics: [topic, ...dl.dl.retryTopics(topic)], fromBeginning: true })
    await consumer.run({
      eachBatch: dl.dl.eachBatch(async ({ batch, resolveOffset }) => {
        for (const message of batch.messages) {
          await each(batch.topic, batch.partition, message)
          resolveOffset(message.offset)
        }
      }),
    })
    await handled.waitForCount(3)
    expect(handled.messages.map((m) => [m.topic, m.value])).toEqual([
      [topic, 'a'],
      [topic, 'b'],
      [`${topic}.retry-1`, 'flaky'],
    ])
    expect(dl.events.map((e) => [e.type, e.payload.retryTopic])).toEqual([['dead_letter.retry', `${topic}.retry-1`]])
    await committed(t, groupId, topic, '3')
    const admin = await t.admin()
    expect((await admin.fetchTopicOffsets(`${topic}.dlq`))[0]!.high).toBe('0')
    await dl.dl.disconnect()
  })
})

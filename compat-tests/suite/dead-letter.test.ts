// The dead-letter extension (src/deadLetter/) behaves the same on both transports: a failing message is retried in
// place with backoff, then moved to the dead-letter topic with its origin in headers, its offset committed, and
// the partition moves on in order.
import type { Kafka } from 'kafkajs'
import { describe, expect } from 'vitest'
import {
  attachDeadLetterMetrics,
  createMetrics,
  deadLetter,
  DLT_HEADERS,
  readDeadLetters,
  replayDeadLetters,
  type BackoffOptions,
  type DeadLetterEvent,
} from '../../src/index.js'
import { Collector, backendName, contract, once, uniqueName, waitFor, type Scope } from '../harness.js'

const FAST_BACKOFF = { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 }

/** A consumer of `topic` whose handler fails for the values in `failing` (a count per value, Infinity = always). */
async function runWithDeadLetter(
  t: Scope,
  topic: string,
  failing: Record<string, number>,
  options: { maxAttempts?: number; groupId?: string; backoff?: BackoffOptions } = {},
) {
  const kafka = (await t.kafka()) as Kafka
  const groupId = options.groupId ?? uniqueName('dlq_group')
  const dl = deadLetter(kafka, { groupId, topic: `${topic}.dlq`, maxAttempts: options.maxAttempts ?? 3, backoff: options.backoff ?? FAST_BACKOFF })
  const events: DeadLetterEvent[] = []
  dl.on(dl.events.RETRY, (e) => events.push(e))
  dl.on(dl.events.DEAD_LETTER, (e) => events.push(e))
  const metrics = createMetrics()
  attachDeadLetterMetrics(dl, metrics)
  await dl.connect()
  const calls: string[] = []
  const handled = new Collector()
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: dl.eachMessage(async (p) => {
      const value = p.message.value!.toString()
      calls.push(value)
      if ((failing[value] ?? 0) > 0) {
        failing[value]!--
        throw new TypeError(`cannot handle ${value}`)
      }
      await handled.eachMessage(p)
    }),
  })
  return { dl, events, calls, handled, consumer, groupId, metrics }
}

/** The first `n` messages of the dead-letter topic, headers as text. */
async function dlqMessages(t: Scope, dlqTopic: string, n: number) {
  const reader = await t.consumer()
  await reader.subscribe({ topic: dlqTopic, fromBeginning: true })
  const seen = new Collector()
  await reader.run({ eachMessage: seen.eachMessage })
  return (await seen.waitForCount(n)).map((m) => ({
    ...m,
    headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)])),
  }))
}

describe('dead-letter extension', () => {
  contract('a poison message is tried maxAttempts times, dead-lettered with its origin, and the partition moves on in order', async (t) => {
    const topic = await t.topic(1, 'dlq_src')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: ['m0', 'bad', 'm2', 'm3'].map((value) => ({ key: 'k', value, headers: { trace: 'abc' } })) })

    const run = await runWithDeadLetter(t, topic, { bad: Infinity })
    await run.handled.waitForCount(3)
    expect(run.handled.messages.map((m) => m.value)).toEqual(['m0', 'm2', 'm3'])
    expect(run.calls).toEqual(['m0', 'bad', 'bad', 'bad', 'm2', 'm3'])
    expect(run.events.map((e) => [e.type, e.payload.attempts])).toEqual([
      ['dead_letter.retry', 1],
      ['dead_letter.retry', 2],
      ['dead_letter.dead_lettered', 3],
    ])
    expect(run.events[2]!.payload).toMatchObject({ groupId: run.groupId, topic, partition: 0, offset: '1', deadLetterTopic: `${topic}.dlq` })
    const counted = async (name: string) =>
      (await run.metrics.registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.topic === topic)?.value
    expect(await counted('messaging_client_retries_total')).toBe(2)
    expect(await counted('messaging_client_dead_lettered_messages_total')).toBe(1)

    const [dead] = await dlqMessages(t, `${topic}.dlq`, 1)
    expect(dead!.key).toBe('k')
    expect(dead!.value).toBe('bad')
    expect(dead!.headers).toMatchObject({
      trace: 'abc',
      [DLT_HEADERS.topic]: topic,
      [DLT_HEADERS.partition]: '0',
      [DLT_HEADERS.offset]: '1',
      [DLT_HEADERS.group]: run.groupId,
      [DLT_HEADERS.attempts]: '3',
      [DLT_HEADERS.errorClass]: 'TypeError',
      [DLT_HEADERS.errorMessage]: 'cannot handle bad',
    })
    expect(dead!.headers[DLT_HEADERS.errorStack]).toContain('TypeError: cannot handle bad')

    // everything, the poison message included, is committed
    const admin = await t.admin()
    await waitFor(
      async () => {
        const [offsets] = await admin.fetchOffsets({ groupId: run.groupId, topics: [topic] })
        return offsets!.partitions[0]!.offset === '4'
      },
      { message: 'committed offset 4' },
    )
    await run.dl.disconnect()
  })

  contract('a message that succeeds before maxAttempts is handled once and never dead-lettered', async (t) => {
    const topic = await t.topic(1, 'dlq_flaky')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'flaky' }, { value: 'after' }] })
    const run = await runWithDeadLetter(t, topic, { flaky: 2 })
    await run.handled.waitForCount(2)
    expect(run.handled.messages.map((m) => m.value)).toEqual(['flaky', 'after'])
    expect(run.calls).toEqual(['flaky', 'flaky', 'flaky', 'after'])
    expect(run.events.map((e) => e.type)).toEqual(['dead_letter.retry', 'dead_letter.retry'])
    const admin = await t.admin()
    expect((await admin.fetchTopicOffsets(`${topic}.dlq`))[0]!.high).toBe('0')
    await run.dl.disconnect()
  })

  contract('partitions fail independently: a poison message in one partition does not stop the other', async (t) => {
    const topic = await t.topic(2, 'dlq_parts')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { partition: 0, value: 'bad' },
        { partition: 0, value: 'p0-after' },
        { partition: 1, value: 'p1-a' },
        { partition: 1, value: 'p1-b' },
      ],
    })
    const run = await runWithDeadLetter(t, topic, { bad: Infinity }, { maxAttempts: 2 })
    await run.handled.waitForCount(3)
    expect(run.handled.messages.filter((m) => m.partition === 1).map((m) => m.value)).toEqual(['p1-a', 'p1-b'])
    expect(run.handled.messages.filter((m) => m.partition === 0).map((m) => m.value)).toEqual(['p0-after'])
    const [dead] = await dlqMessages(t, `${topic}.dlq`, 1)
    expect(dead!.headers[DLT_HEADERS.partition]).toBe('0')
    await run.dl.disconnect()
  })

  contract(
    'a move is final: a DEAD_LETTER listener that throws does not fail the handler, so the message is not delivered and moved again',
    async (t) => {
      const topic = await t.topic(1, 'dlq_final')
      await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
      const producer = await t.producer()
      await producer.send({ topic, messages: ['m0', 'bad', 'm2'].map((value) => ({ key: 'k', value })) })
      const run = await runWithDeadLetter(t, topic, { bad: Infinity })
      let thrown = 0
      run.dl.on(run.dl.events.DEAD_LETTER, () => {
        if (thrown++ === 0) throw new Error('a listener that fails once')
      })
      // the partition goes on only after the move: by the time m2 is handled a second move would have happened
      await run.handled.waitForCount(2)
      expect(run.handled.messages.map((m) => m.value)).toEqual(['m0', 'm2'])
      expect(run.calls).toEqual(['m0', 'bad', 'bad', 'bad', 'm2'])
      expect(thrown).toBe(1)
      const kafka = (await t.kafka()) as Kafka
      expect((await readDeadLetters(kafka, `${topic}.dlq`)).map((e) => e.value!.toString())).toEqual(['bad'])
      await run.dl.disconnect()
    },
  )

  contract('bad options are refused with KafkaJSNonRetriableError before anything connects', async (t) => {
    const kafka = (await t.kafka()) as Kafka
    for (const bad of [{ groupId: '' }, { groupId: 'g', maxAttempts: 0 }, { groupId: 'g', backoff: { jitter: 2 } }, { groupId: 'g', topic: '' }]) {
      expect(() => deadLetter(kafka, bad)).toThrow(/Invalid dead-letter options/)
    }
  })

  contract('attempt counts survive a consumer restart on pgQueue; on Kafka they start again', async (t) => {
    const topic = await t.topic(1, 'dlq_restart')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'bad' }] })
    const groupId = uniqueName('dlq_restart_group')

    // first life: two failures of three (a short wait, then a long one), then the consumer goes away while waiting
    const first = await runWithDeadLetter(
      t,
      topic,
      { bad: Infinity },
      { groupId, backoff: { initialMs: 20, factor: 10_000, maxMs: 120_000, jitter: 0 } },
    )
    await once((l) => first.dl.on(first.dl.events.RETRY, (e) => e.payload.attempts === 2 && l(undefined)), { message: 'second failure' })
    await Promise.all([first.consumer.disconnect(), first.dl.disconnect()])
    expect(first.calls).toEqual(['bad', 'bad'])

    // second life: pgQueue remembers two failures, so one more attempt dead-letters it; Kafka counts from 0 again
    const second = await runWithDeadLetter(t, topic, { bad: Infinity }, { groupId })
    await once((l) => second.dl.on(second.dl.events.DEAD_LETTER, () => l(undefined)), { message: 'dead-lettered', timeout: 30_000 })
    const expectedCalls = backendName === 'pgqueue' ? 1 : 3
    expect(second.calls).toEqual(Array(expectedCalls).fill('bad'))
    const [dead] = await dlqMessages(t, `${topic}.dlq`, 1)
    expect(dead!.headers[DLT_HEADERS.attempts]).toBe('3')
    await second.dl.disconnect()
  })

  contract('readDeadLetters lists the entries with their origin; replayDeadLetters sends one back to its partition', async (t) => {
    const topic = await t.topic(2, 'dlq_replay')
    await t.createTopics([{ topic: `${topic}.dlq`, numPartitions: 1 }])
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ partition: 1, key: 'k', value: 'bad', headers: { h: 'v' } }] })
    const run = await runWithDeadLetter(t, topic, { bad: 2 }, { maxAttempts: 2 })
    await once((l) => run.dl.on(run.dl.events.DEAD_LETTER, () => l(undefined)), { message: 'dead-lettered' })
    const kafka = (await t.kafka()) as Kafka

    const entries = await readDeadLetters(kafka, `${topic}.dlq`)
    expect(entries).toHaveLength(1)
    expect(entries[0]!.origin).toMatchObject({ topic, partition: 1, offset: '0', group: run.groupId, attempts: 2, errorClass: 'TypeError' })

    // the handler now succeeds (it failed twice only): the replayed message is handled from its own partition
    expect(await replayDeadLetters(kafka, entries)).toBe(1)
    const [again] = await run.handled.waitForCount(1)
    expect(again).toMatchObject({ partition: 1, offset: '1', key: 'k', value: 'bad' })
    expect(String(again!.headers.h)).toBe('v')
    expect(again!.headers[DLT_HEADERS.topic]).toBeUndefined()
    await run.dl.disconnect()
  })

  contract('readDeadLetters with ranges reads only those offsets: nothing before a range is even delivered to its reader', async (t) => {
    const dlq = await t.topic(2, 'dlq_ranges')
    const producer = await t.producer()
    const origin = { [DLT_HEADERS.topic]: dlq, [DLT_HEADERS.partition]: '0', [DLT_HEADERS.offset]: '0' }
    await producer.send({ topic: dlq, messages: Array.from({ length: 30 }, (_, i) => ({ partition: 0, value: `a${i}`, headers: origin })) })
    await producer.send({ topic: dlq, messages: [{ partition: 1, value: 'b0', headers: origin }] })
    const kafka = (await t.kafka()) as Kafka
    // the reader's consumer, observed: which offsets it was handed
    const delivered: string[] = []
    const observed = new Proxy(kafka, {
      get(target, prop, receiver) {
        if (prop !== 'consumer') return Reflect.get(target, prop, receiver)
        return (config: Parameters<Kafka['consumer']>[0]) => {
          const consumer = target.consumer(config)
          const run = consumer.run.bind(consumer)
          consumer.run = (cfg) =>
            run({ ...cfg, eachMessage: async (p) => (delivered.push(`${p.partition}:${p.message.offset}`), cfg!.eachMessage!(p)) })
          return consumer
        }
      },
    })
    const entries = await readDeadLetters(observed, dlq, { ranges: [{ partition: 0, from: '25', to: '27' }] })
    expect(entries.map((e) => `${e.partition}:${e.offset}`)).toEqual(['0:25', '0:26', '0:27'])
    expect(entries.map((e) => e.value!.toString())).toEqual(['a25', 'a26', 'a27'])
    expect(delivered.every((d) => d.startsWith('0:') && Number(d.slice(2)) >= 25)).toBe(true)
    // open-ended and clipped ranges, the limit within them, several partitions
    const tail = await readDeadLetters(kafka, dlq, { ranges: [{ partition: 0, from: '28', to: '99' }, { partition: 1 }] })
    expect(tail.map((e) => `${e.partition}:${e.offset}`)).toEqual(['0:28', '0:29', '1:0'])
    expect((await readDeadLetters(kafka, dlq, { ranges: [{ partition: 0, from: '10' }], limit: 2 })).map((e) => e.offset)).toEqual(['10', '11'])
    expect(await readDeadLetters(kafka, dlq, { ranges: [{ partition: 0, from: '40' }] })).toEqual([])
  })
})

import kafkajs from 'kafkajs'
import type { PartitionerArgs, RecordMetadata } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages } from '../harness.js'

const { KafkaJSError, KafkaJSNonRetriableError } = kafkajs

/** Consumes `n` messages of `topic` from the beginning with a fresh group. */
async function readAll(t: import('../harness.js').Scope, topic: string, n: number) {
  const consumer = await t.consumer()
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  return seen.waitForCount(n)
}

const partitionsOf = (meta: RecordMetadata[]) => meta.map((m) => m.partition)

describe('producer', () => {
  contract('send returns RecordMetadata; the first message of a partition is offset 0', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const meta = await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] })
    expect(meta).toHaveLength(1)
    expect(meta[0]).toMatchObject({ topicName: topic, partition: 0, errorCode: 0, baseOffset: '0' })
  })

  contract('baseOffset of the next send follows the previous messages', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(3) })
    const [second] = await producer.send({ topic, messages: messages(2) })
    expect(second!.baseOffset).toBe('3')
    const third = await producer.send({ topic, messages: [{ value: 'x' }] })
    expect(third[0]!.baseOffset).toBe('5')
  })

  contract('consumed offsets are consecutive and in send order within a partition', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(30) })
    const got = await readAll(t, topic, 30)
    expect(got.map((m) => m.offset)).toEqual(Array.from({ length: 30 }, (_, i) => String(i)))
    expect(got.map((m) => m.value)).toEqual(messages(30).map((m) => m.value))
  })

  contract('sendBatch writes to several topics and returns metadata for each', async (t) => {
    const [a, b] = [await t.topic(1), await t.topic(2)]
    const producer = await t.producer()
    const meta = await producer.sendBatch({
      topicMessages: [
        { topic: a, messages: messages(2, 'a') },
        { topic: b, messages: [{ value: 'b0', partition: 1 }] },
      ],
    })
    expect(meta.map((m) => m.topicName).sort()).toEqual([a, b].sort())
    expect(meta.find((m) => m.topicName === b)).toMatchObject({ partition: 1, baseOffset: '0', errorCode: 0 })
    expect((await readAll(t, a, 2)).map((m) => m.value)).toEqual(['a-0', 'a-1'])
  })

  contract('messages with the same key land in the same partition', async (t) => {
    const topic = await t.topic(4)
    const producer = await t.producer()
    const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`)
    const first = await Promise.all(keys.map((key) => producer.send({ topic, messages: [{ key, value: '1' }] })))
    const again = await Promise.all(keys.map((key) => producer.send({ topic, messages: [{ key, value: '2' }] })))
    expect(first.map(partitionsOf)).toEqual(again.map(partitionsOf))
    const got = await readAll(t, topic, 24)
    for (const key of keys) {
      const parts = new Set(got.filter((m) => m.key === key).map((m) => m.partition))
      expect(parts.size).toBe(1)
    }
    // with 12 keys over 4 partitions, a partitioner that ignores the key would be a bug
    expect(new Set(got.map((m) => m.partition)).size).toBeGreaterThan(1)
  })

  contract('a string key and the same bytes as a Buffer key pick the same partition', async (t) => {
    const topic = await t.topic(4)
    const producer = await t.producer()
    for (const key of ['alpha', 'beta', 'gamma', 'delta']) {
      const [s] = await producer.send({ topic, messages: [{ key, value: 's' }] })
      const [b] = await producer.send({ topic, messages: [{ key: Buffer.from(key), value: 'b' }] })
      expect(b!.partition).toBe(s!.partition)
    }
  })

  contract('an explicit partition wins over the key', async (t) => {
    const topic = await t.topic(3)
    const producer = await t.producer()
    const meta = await producer.send({
      topic,
      messages: [
        { key: 'same', value: 'p2', partition: 2 },
        { key: 'same', value: 'p0', partition: 0 },
      ],
    })
    expect(meta.map((m) => m.partition).sort()).toEqual([0, 2])
    const got = await readAll(t, topic, 2)
    expect(got.find((m) => m.value === 'p2')!.partition).toBe(2)
    expect(got.find((m) => m.value === 'p0')!.partition).toBe(0)
  })

  contract('a custom partitioner from createPartitioner decides the partition', async (t) => {
    const topic = await t.topic(3)
    const calls: PartitionerArgs[] = []
    const producer = await t.producer({
      createPartitioner: () => (args) => {
        calls.push(args)
        return Number(args.message.value!.toString()) % args.partitionMetadata.length
      },
    })
    await producer.send({ topic, messages: [0, 1, 2, 3, 4, 5].map((i) => ({ key: 'k', value: String(i) })) })
    expect(calls).toHaveLength(6)
    expect(calls[0]!.topic).toBe(topic)
    expect(calls[0]!.partitionMetadata).toHaveLength(3)
    const got = await readAll(t, topic, 6)
    for (const m of got) expect(m.partition).toBe(Number(m.value) % 3)
  })

  contract('string headers arrive as Buffers with the same bytes', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'v', headers: { trace: 'abc-123', ünï: 'cödé ✓' } }] })
    const [m] = await readAll(t, topic, 1)
    expect(Buffer.isBuffer(m!.headers.trace)).toBe(true)
    expect(String(m!.headers.trace)).toBe('abc-123')
    expect(String(m!.headers['ünï'])).toBe('cödé ✓')
  })

  contract('binary Buffer headers round-trip byte for byte', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const bytes = Buffer.from([0, 1, 2, 255, 254, 0, 128])
    await producer.send({ topic, messages: [{ value: 'v', headers: { bin: bytes, empty: Buffer.alloc(0) } }] })
    const [m] = await readAll(t, topic, 1)
    expect(Buffer.compare(m!.headers.bin as Buffer, bytes)).toBe(0)
    expect((m!.headers.empty as Buffer).length).toBe(0)
  })

  contract('an array header value arrives as an array of Buffers in order', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'v', headers: { multi: ['one', Buffer.from('two'), 'three'] } }] })
    const [m] = await readAll(t, topic, 1)
    const multi = m!.headers.multi as Buffer[]
    expect(Array.isArray(multi)).toBe(true)
    expect(multi.map(String)).toEqual(['one', 'two', 'three'])
  })

  contract('a null value (tombstone) and a null key are delivered as null', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { key: 'gone', value: null },
        { key: null, value: 'kept' },
      ],
    })
    const got = await readAll(t, topic, 2)
    expect(got[0]).toMatchObject({ key: 'gone', value: null })
    expect(got[0]!.raw.value).toBeNull()
    expect(got[1]).toMatchObject({ key: null, value: 'kept' })
    expect(got[1]!.raw.key).toBeNull()
  })

  contract('a value of about 1 MB round-trips intact', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const big = Buffer.alloc(1_000_000)
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251
    await producer.send({ topic, messages: [{ key: 'big', value: big }] })
    const [m] = await readAll(t, topic, 1)
    expect(m!.raw.value!.length).toBe(big.length)
    expect(Buffer.compare(m!.raw.value!, big)).toBe(0)
  })

  contract('consumed messages carry a millisecond timestamp close to the send time', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const before = Date.now()
    await producer.send({ topic, messages: [{ value: 'when' }] })
    const [m] = await readAll(t, topic, 1)
    expect(m!.timestamp).toMatch(/^\d+$/)
    expect(Math.abs(Number(m!.timestamp) - before)).toBeLessThan(60_000)
  })

  contract('send without a topic is rejected as non-retriable "Invalid topic"', async (t) => {
    const producer = await t.producer()
    const err = await producer.send({ topic: '', messages: [{ value: 'x' }] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toBe('Invalid topic')
  })

  contract('send without a messages array is rejected naming the topic', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const err = await producer.send({ topic, messages: undefined as never }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toBe(`Invalid messages array [undefined] for topic "${topic}"`)
  })

  contract('a message without a value is rejected and nothing of that send is written', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const err = await producer.send({ topic, messages: [{ value: 'ok' }, { key: 'k' } as never] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toMatch(new RegExp(`^Invalid message without value for topic "${topic}"`))
    const offsets = await (await t.admin()).fetchTopicOffsets(topic)
    expect(offsets[0]!.high).toBe('0')
  })

  contract('send after disconnect fails with "The producer is disconnected"', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.disconnect()
    const err = await producer.send({ topic, messages: [{ value: 'late' }] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect((err as Error).message).toBe('The producer is disconnected')
  })
})

import kafkajs from 'kafkajs'
import type { Producer, ProducerConfig } from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract, makeKafka, messages, uniqueName, waitFor, type Scope } from '../harness.js'

const { KafkaJSError, KafkaJSNonRetriableError, KafkaJSProtocolError } = kafkajs

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: Error) => e,
  )
}

/** A producer that was never connected: validation must still answer first. */
async function unconnected(t: Scope, config?: ProducerConfig): Promise<Producer> {
  return (await t.kafka()).producer(config)
}

const INVALID_TOPIC = 'The request attempted to perform an operation on an invalid topic'

/** KafkaJS surfaces a protocol error directly or as the cause of its retry wrapper. */
function protocolType(err: Error): string | undefined {
  const e = (err as { cause?: Error }).cause instanceof KafkaJSProtocolError ? (err as { cause: Error }).cause : err
  return e instanceof KafkaJSProtocolError ? (e as InstanceType<typeof KafkaJSProtocolError>).type : undefined
}

describe('producer fidelity', () => {
  contract('RecordMetadata of a fresh topic has logStartOffset "0" and the KafkaJS fields', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const [meta] = await producer.send({ topic, messages: messages(2) })
    expect(meta).toEqual({
      topicName: topic,
      partition: 0,
      errorCode: 0,
      baseOffset: '0',
      logAppendTime: '-1',
      logStartOffset: '0',
    })
  })

  contract('logStartOffset follows deleteTopicRecords', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(4) })
    await (await t.admin()).deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '3' }] })
    const [meta] = await producer.send({ topic, messages: messages(1, 'after') })
    expect(meta!.baseOffset).toBe('4')
    expect(meta!.logStartOffset).toBe('3')
  })

  contract('a send asking for LZ4 or ZSTD with no codec registered rejects with KafkaJSNotImplemented, writing nothing', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    for (const compression of [kafkajs.CompressionTypes.LZ4, kafkajs.CompressionTypes.ZSTD]) {
      const err = await rejection(producer.send({ topic, compression, messages: messages(1) }))
      expect(err).toBeInstanceOf(kafkajs.KafkaJSNotImplemented)
      expect(err.message).toMatch(/compression not implemented/)
    }
    const [meta] = await producer.send({ topic, compression: kafkajs.CompressionTypes.GZIP, messages: messages(1) })
    expect(meta!.baseOffset).toBe('0')
  })

  contract('acks: 0 resolves with an empty array, and the message is still written', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const result = await producer.send({ topic, acks: 0, messages: [{ value: 'fire-and-forget' }] })
    expect(result).toEqual([])
    const admin = await t.admin()
    await waitFor(async () => (await admin.fetchTopicOffsets(topic))[0]!.high === '1', { message: 'high watermark 1' })
  })

  contract('sendBatch with acks: 0 resolves with an empty array', async (t) => {
    const [a, b] = [await t.topic(1), await t.topic(1)]
    const producer = await t.producer()
    const result = await producer.sendBatch({
      acks: 0,
      topicMessages: [
        { topic: a, messages: [{ value: 'a' }] },
        { topic: b, messages: [{ value: 'b' }] },
      ],
    })
    expect(result).toEqual([])
  })

  contract('acks: 1 returns the same RecordMetadata as acks: -1', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const [meta] = await producer.send({ topic, acks: 1, messages: messages(1) })
    expect(meta).toMatchObject({ topicName: topic, partition: 0, errorCode: 0, baseOffset: '0' })
  })

  contract('sendBatch merges entries of the same topic into one write per partition', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    const result = await producer.sendBatch({
      topicMessages: [
        { topic, messages: [{ value: 'first' }] },
        { topic, messages: [{ value: 'second' }, { value: 'third' }] },
      ],
    })
    expect(result).toHaveLength(1)
    expect(result[0]).toMatchObject({ topicName: topic, partition: 0, baseOffset: '0' })
    const again = await producer.send({ topic, messages: [{ value: 'fourth' }] })
    expect(again[0]!.baseOffset).toBe('3')
  })

  contract('an idempotent producer with retries < 1 throws at kafka.producer()', async (t) => {
    const kafka = await t.kafka()
    for (const retries of [0, -1]) {
      let err: unknown
      try {
        kafka.producer({ idempotent: true, retry: { retries } })
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe('Idempotent producer must allow retries to protect against transient errors')
    }
  })

  contract('an idempotent producer with retries: 1 is accepted and sends', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer({ idempotent: true, retry: { retries: 1 } })
    expect(producer.isIdempotent()).toBe(true)
    const [meta] = await producer.send({ topic, messages: messages(1) })
    expect(meta!.errorCode).toBe(0)
  })

  contract('send validation runs before the connection check: falsy topic', async (t) => {
    const producer = await unconnected(t)
    const err = await rejection(producer.send({ topic: '', messages: [{ value: 'x' }] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid topic')
  })

  contract('send validation runs before the connection check: missing messages', async (t) => {
    const producer = await unconnected(t)
    const err = await rejection(producer.send({ topic: 'some-topic', messages: undefined as never }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid messages array [undefined] for topic "some-topic"')
  })

  contract('send validation runs before the connection check: message without value', async (t) => {
    const producer = await unconnected(t)
    const err = await rejection(producer.send({ topic: 'some-topic', messages: [{ key: 'k' } as never] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid message without value for topic "some-topic": {"key":"k"}')
  })

  contract('send validation runs before the connection check: idempotent with acks !== -1', async (t) => {
    const producer = (await t.kafka()).producer({ idempotent: true })
    const err = await rejection(producer.send({ topic: 'some-topic', acks: 1, messages: [{ value: 'x' }] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe("Not requiring ack for all messages invalidates the idempotent producer's EoS guarantees")
  })

  contract('messages: [null] fails the way KafkaJS does, before the connection check', async (t) => {
    for (const producer of [await unconnected(t), await t.producer()]) {
      const err = await rejection(producer.send({ topic: 'some-topic', messages: [null as never] }))
      expect(err).toBeInstanceOf(TypeError)
      expect(err.message).toMatch(/null/)
    }
  })

  contract('a valid send on an unconnected producer fails with "The producer is disconnected"', async (t) => {
    const producer = await unconnected(t)
    const err = await rejection(producer.send({ topic: 'some-topic', messages: [{ value: 'x' }] }))
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err).not.toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('The producer is disconnected')
  })

  contract('sendBatch names the first falsy topic "Invalid topic" even after valid entries', async (t) => {
    const producer = await t.producer()
    const err = await rejection(
      producer.sendBatch({
        topicMessages: [
          { topic: 'ok-topic', messages: [{ value: 'x' }] },
          { topic: '', messages: [] },
        ],
      }),
    )
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid topic')
  })

  for (const [label, name] of [
    ['characters outside [a-zA-Z0-9._-]', 'bad topic!'],
    ['"."', '.'],
    ['".."', '..'],
    ['more than 249 characters', 'x'.repeat(250)],
  ] as const) {
    contract(`a topic name with ${label} fails with INVALID_TOPIC_EXCEPTION`, async (t) => {
      const producer = await t.producer({ retry: { retries: 0 } })
      const err = await rejection(producer.send({ topic: name, messages: [{ value: 'x' }] }))
      expect(protocolType(err)).toBe('INVALID_TOPIC_EXCEPTION')
      const protocol = err instanceof KafkaJSProtocolError ? err : ((err as { cause?: Error }).cause as Error)
      expect(protocol.message).toBe(INVALID_TOPIC)
      expect((protocol as InstanceType<typeof KafkaJSProtocolError>).retriable).toBe(false)
    })
  }

  contract('the producer keeps working after a send to an illegal topic name', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer({ retry: { retries: 0 } })
    await rejection(producer.send({ topic: 'no spaces allowed', messages: [{ value: 'x' }] }))
    const [meta] = await producer.send({ topic, messages: [{ value: 'fine' }] })
    expect(meta).toMatchObject({ topicName: topic, errorCode: 0, baseOffset: '0' })
  })

  contract('send with an empty messages array writes nothing', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [] })
    expect((await (await t.admin()).fetchTopicOffsets(topic))[0]!.high).toBe('0')
  })

  contract('allowAutoTopicCreation: false refuses an unknown topic with UNKNOWN_TOPIC_OR_PARTITION', async (t) => {
    const producer = await t.producer({ allowAutoTopicCreation: false, retry: { retries: 1, initialRetryTime: 50 } })
    const err = await rejection(producer.send({ topic: uniqueName('absent'), messages: [{ value: 'x' }] }))
    expect(protocolType(err)).toBe('UNKNOWN_TOPIC_OR_PARTITION')
    expect((await (await t.admin()).listTopics()).some((n) => n.startsWith('compat_absent'))).toBe(false)
  })

  contract('a second Kafka client sees a topic the first created', async (t) => {
    const topic = await t.topic(2)
    const other = await makeKafka({ clientId: 'other' })
    const producer = other.producer()
    await producer.connect()
    try {
      const result = await producer.send({ topic, messages: [{ value: 'x', partition: 1 }] })
      expect(result).toEqual([expect.objectContaining({ topicName: topic, partition: 1, baseOffset: '0' })])
    } finally {
      await producer.disconnect()
    }
  })
})

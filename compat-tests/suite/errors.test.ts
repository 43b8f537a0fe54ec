import kafkajs from 'kafkajs'
import type { ConsumerCrashEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract, messages, once, uniqueName } from '../harness.js'

const { KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: Error) => e,
  )
}

describe('errors', () => {
  contract('validation errors are KafkaJSNonRetriableError with the KafkaJS fields', async (t) => {
    const producer = await t.producer()
    const err = await rejection(producer.send({ topic: '', messages: [] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err).toBeInstanceOf(Error)
    expect(err.name).toBe('KafkaJSNonRetriableError')
    expect((err as InstanceType<typeof KafkaJSError>).retriable).toBe(false)
  })

  contract('a handler that keeps failing crashes with KafkaJSNumberOfRetriesExceeded', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(1) })
    const consumer = await t.consumer({ retry: { retries: 0, restartOnFailure: async () => false } })
    const crashed = once<ConsumerCrashEvent>((l) => consumer.on(consumer.events.CRASH, l), { message: 'CRASH' })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async () => {
        throw new Error('always fails')
      },
    })
    const { payload } = await crashed
    expect(payload.restart).toBe(false)
    expect(payload.error).toBeInstanceOf(KafkaJSNumberOfRetriesExceeded)
    expect(payload.error.name).toBe('KafkaJSNumberOfRetriesExceeded')
    expect((payload.error as InstanceType<typeof KafkaJSNumberOfRetriesExceeded>).retryCount).toEqual(expect.any(Number))
  })

  contract('restartOnFailure decides the restart after retries are exhausted', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(1) })
    const asked: Error[] = []
    const consumer = await t.consumer({
      retry: {
        retries: 0,
        restartOnFailure: async (e) => {
          asked.push(e)
          return false
        },
      },
    })
    const crashed = once<ConsumerCrashEvent>((l) => consumer.on(consumer.events.CRASH, l), { message: 'CRASH' })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async () => {
        throw new Error('fails')
      },
    })
    const { payload } = await crashed
    expect(asked.length).toBeGreaterThan(0)
    expect(asked[0]!.message).toContain('fails')
    expect(payload.restart).toBe(false)
  })

  contract('a TypeError in the handler crashes the consumer without restart', async (t) => {
    const topic = await t.topic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(1) })
    const consumer = await t.consumer()
    const crashed = once<ConsumerCrashEvent>((l) => consumer.on(consumer.events.CRASH, l), { message: 'CRASH' })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async () => {
        throw new TypeError('bug in handler')
      },
    })
    const { payload } = await crashed
    expect(payload.restart).toBe(false)
    expect(payload.error.message).toContain('bug in handler')
  })

  contract('deleteTopics of an unknown topic fails with UNKNOWN_TOPIC_OR_PARTITION', async (t) => {
    const admin = await t.separateAdmin({ retry: { retries: 1, initialRetryTime: 50 } })
    const err = await rejection(admin.deleteTopics({ topics: [uniqueName('missing')] }))
    // KafkaJS retries this retriable protocol error, then wraps it as the cause
    const protocol = err instanceof KafkaJSNumberOfRetriesExceeded ? (err.cause as Error) : err
    expect(protocol).toBeInstanceOf(KafkaJSProtocolError)
    expect(protocol.name).toBe('KafkaJSProtocolError')
    expect((protocol as InstanceType<typeof KafkaJSProtocolError>).type).toBe('UNKNOWN_TOPIC_OR_PARTITION')
  })

  contract('createTopics with the same topic twice in one call is rejected', async (t) => {
    const admin = await t.admin()
    const topic = uniqueName('dup')
    const err = await rejection(admin.createTopics({ topics: [{ topic }, { topic }] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid topics array, it cannot have multiple entries for the same topic')
  })

  contract('producer and admin on() reject unknown event names', async (t) => {
    const producer = await t.producer()
    const admin = await t.admin()
    const subscribers: ((name: never) => unknown)[] = [(name) => producer.on(name, () => {}), (name) => admin.on(name, () => {})]
    for (const subscribe of subscribers) {
      let err: unknown
      try {
        subscribe('nope' as never)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toMatch(/^Event name should be one of /)
    }
    expect(producer.events.CONNECT).toBe('producer.connect')
    expect(admin.events.CONNECT).toBe('admin.connect')
  })
})

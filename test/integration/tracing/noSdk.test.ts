// Without a registered OpenTelemetry SDK tracing is the API's no-op: messages carry exactly the headers the app
// sent (no traceparent), and the app's message objects are never modified, with or without an SDK.
import { propagation } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { afterAll, describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { deferred, useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('tracing')
const kafka = new Kafka({ logLevel: logLevel.NOTHING, pgqueue: db.options })
const producer = kafka.producer()
afterAll(() => producer.disconnect())

async function roundTrip(topic: string, message: { value: string; headers: Record<string, string> }) {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic }] })
  await admin.disconnect()
  await producer.connect()
  await producer.send({ topic, messages: [message] })
  const consumer = kafka.consumer({ groupId: `g-${topic}`, maxWaitTimeInMs: 100 })
  const got = deferred<Record<string, string>>()
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ message: m }) => got.resolve(Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]))),
  })
  try {
    return await got.promise
  } finally {
    await consumer.disconnect()
  }
}

describe('tracing without an SDK', () => {
  it('adds no header and leaves the message object alone', async () => {
    const message = { value: 'v', headers: { app: 'yes' } }
    expect(await roundTrip('no-sdk', message)).toEqual({ app: 'yes' })
    expect(message.headers).toEqual({ app: 'yes' })
  })

  it('with only a propagator (no tracer provider), still adds nothing a consumer could mistake for a trace', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    try {
      const message = { value: 'v', headers: { app: 'yes' } }
      // the no-op tracer's spans are not recording and carry an invalid context: inject writes nothing
      expect(await roundTrip('propagator-only', message)).toEqual({ app: 'yes' })
      expect(message.headers).toEqual({ app: 'yes' })
    } finally {
      propagation.disable()
    }
  })
})

// KafkaJS's requestTimeout (KafkaJS spec "emits the request timeout event" of the producer): on PostgreSQL
// it is the statement_timeout of the client's statements, so a tiny one ends them as a slow broker request ends.
import type { InstrumentationEvent } from 'kafkajs'
import pg from 'pg'
import { describe, expect, inject } from 'vitest'
import { backendName, fileSchema, makeKafka } from '../backend.js'
import { contract, uniqueName } from '../harness.js'

const TIMEOUT_PAYLOAD = {
  apiKey: expect.any(Number),
  apiName: expect.any(String),
  apiVersion: expect.any(Number),
  broker: expect.any(String),
  clientId: expect.any(String),
  correlationId: expect.any(Number),
  createdAt: expect.any(Number),
  pendingDuration: expect.any(Number),
  sentAt: expect.any(Number),
}

/**
 * On PostgreSQL a statement can finish within 1 ms, so the request is made to outlast it: another session runs `sql`
 * in an open transaction (a lock the request waits for) until the returned release (a broker request always takes
 * longer than 1 ms, so nothing is held on Kafka).
 */
async function holdOnPostgres(sql: (schema: string) => string, params: unknown[] = []): Promise<() => Promise<void>> {
  if (backendName === 'kafka') return async () => {}
  const client = new pg.Client({ connectionString: inject('pgUrl') })
  await client.connect()
  await client.query('BEGIN')
  await client.query(sql(`"${fileSchema()}"`), params)
  return async () => {
    await client.query('COMMIT')
    await client.end()
  }
}

/** The partition's write lock: a send waits for it. */
const holdPartition = (topic: string) =>
  holdOnPostgres(
    (schema) =>
      `SELECT pg_advisory_xact_lock(${schema}.metadata_queue_lock_key(t.id, 0)) FROM ${schema}.metadata_queue_topic t WHERE t.topic_name = $1`,
    [topic],
  )

/** The topic table: a topic creation waits for it. */
const holdTopicTable = () => holdOnPostgres((schema) => `LOCK TABLE ${schema}.metadata_queue_topic IN SHARE ROW EXCLUSIVE MODE`)

/** The first request_timeout event seen, in KafkaJS's shape, of `type`. */
function expectTimeoutEvent(seen: InstrumentationEvent<unknown>[], type: string) {
  expect(seen.length).toBeGreaterThan(0)
  expect(seen[0]).toEqual({ id: expect.any(Number), timestamp: expect.any(Number), type, payload: TIMEOUT_PAYLOAD })
}

describe('request timeout events (requestTimeout: 1, enforceRequestTimeout: true)', () => {
  contract(
    'an admin whose createTopics outlasts requestTimeout rejects with KafkaJSRequestTimeoutError, not retried, and emits admin.network.request_timeout',
    async (t) => {
      await t.admin() // the file's schema exists
      const kafka = await makeKafka({
        clientId: uniqueName('rt-admin'),
        config: { requestTimeout: 1, enforceRequestTimeout: true, retry: { retries: 2 } },
      })
      const admin = kafka.admin()
      const seen: InstrumentationEvent<unknown>[] = []
      admin.on(admin.events.REQUEST_TIMEOUT, (e) => seen.push(e))
      await admin.connect()
      const release = await holdTopicTable()
      const errors: string[] = []
      try {
        // as KafkaJS's spec does: new topics until one creation times out (a local broker may answer within 1 ms)
        for (let i = 0; i < 5 && seen.length === 0; i++) {
          await admin.createTopics({ waitForLeaders: false, topics: [{ topic: uniqueName('rt-topic') }] }).catch((e: Error) => errors.push(e.name))
        }
        expectTimeoutEvent(seen, 'admin.network.request_timeout')
        // KafkaJS's createTopics bails on anything but NOT_CONTROLLER: the timeout itself, not NumberOfRetriesExceeded
        expect(errors.length).toBeGreaterThan(0)
        expect(new Set(errors)).toEqual(new Set(['KafkaJSRequestTimeoutError']))
      } finally {
        await release()
        await admin.disconnect()
      }
    },
  )

  contract('a producer whose requests outlast requestTimeout emits producer.network.request_timeout', async (t) => {
    const topic = await t.topic(1)
    const kafka = await makeKafka({ clientId: uniqueName('rt'), config: { requestTimeout: 1, enforceRequestTimeout: true, retry: { retries: 2 } } })
    const producer = kafka.producer()
    const seen: InstrumentationEvent<unknown>[] = []
    producer.on(producer.events.REQUEST_TIMEOUT, (e) => seen.push(e))
    const release = await holdPartition(topic)
    try {
      await producer.connect().catch((e: unknown) => e)
      // a local broker can answer a small request within 1 ms: 1 MB per request, and up to five sends, until one
      // request outlasts it (on PostgreSQL the held lock makes the first one do)
      const messages = Array.from({ length: 4 }, (_, i) => ({ key: `key-${i}`, value: Buffer.alloc(250_000, i) }))
      for (let i = 0; i < 5 && seen.length === 0; i++) await producer.send({ acks: -1, topic, messages }).catch((e: unknown) => e)
      expectTimeoutEvent(seen, 'producer.network.request_timeout')
    } finally {
      await release()
      await producer.disconnect()
    }
  })
})

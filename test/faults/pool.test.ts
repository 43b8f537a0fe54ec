// Pool exhaustion (pool.max 1 with a transaction holding the only connection) and statement timeouts (the
// pool.statementTimeoutMillis option and DATAHUB_PGQUEUE_STATEMENT_TIMEOUT_MS): clear KafkaJS errors, recovery once
// the cause goes away, and no connection left behind after disconnect (counted by this test's application_name).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { tablesFor } from '../../src/db/tables.js'
import { Kafka } from '../../src/kafka.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { KafkaJSError } from '../../src/kafkajs/errors.js'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { countBackends, sleep, uniqueAppName, withAppName } from './support.js'

const t = useTestKafka('fault_pool')
const tables = () => tablesFor(t.db.schema, 'metadata_queue')

afterEach(() => {
  vi.unstubAllEnvs()
})

type Err = Error & { retriable?: boolean; cause?: Error & { retriable?: boolean } }
const failure = async (p: Promise<unknown>): Promise<Err> => {
  try {
    await p
  } catch (e) {
    return e as Err
  }
  throw new Error('expected a failure')
}

async function rowsOf(topic: string): Promise<string[]> {
  const tb = tables()
  const { rows } = await t.db.pool.query<{ v: string }>(
    `SELECT convert_from(m.payload, 'UTF8') AS v FROM ${tb.message} m JOIN ${tb.topic} tp ON tp.id = m.topic_id
     WHERE tp.topic_name = $1 ORDER BY m.partition_id, m.enqueue_seq`,
    [topic],
  )
  return rows.map((r) => r.v)
}

/** Holds the ledger row of (topic, partition 0) in a transaction of the test's own: every send to it waits. */
async function lockPartition(topic: string) {
  const tb = tables()
  const client = await t.db.connect()
  await client.query('BEGIN')
  await client.query(
    `SELECT 1 FROM ${tb.partitionSeq} s JOIN ${tb.topic} tp ON tp.id = s.topic_id WHERE tp.topic_name = $1 AND s.partition_id = 0 FOR UPDATE OF s`,
    [topic],
  )
  return { release: () => client.query('ROLLBACK') }
}

describe('pool exhaustion', () => {
  it('pool.max 1 held by a transaction: a clear retriable error, recovery when it ends, no leaked connection', async () => {
    const app = uniqueAppName('pool')
    const kafka = t.newKafka({ connectionString: withAppName(t.db.connectionString, app), pool: { max: 1, connectionTimeoutMillis: 400 } })
    const topic = uniqueName('pool')
    const plain = kafka.producer({ retry: { retries: 2, initialRetryTime: 100 } })
    const transactional = kafka.producer({ transactionalId: uniqueName('pool-txn') })
    await plain.connect()
    await transactional.connect()
    await plain.send({ topic, messages: [{ value: 'before' }] })

    const txn = await transactional.transaction()
    await txn.send({ topic, messages: [{ value: 'in-txn' }] })
    const started = Date.now()
    const err = await failure(plain.send({ topic, messages: [{ value: 'starved' }] }))
    const waited = Date.now() - started
    console.log(`pool exhausted: ${err.name} after ${waited} ms: ${err.message} / cause ${err.cause?.name}: ${err.cause?.message}`)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err.name).toBe('KafkaJSNumberOfRetriesExceeded')
    expect(err.cause?.name).toBe('KafkaJSConnectionError')
    expect(err.cause?.retriable).toBe(true)
    expect(err.message).toMatch(/timeout exceeded when trying to connect/i)
    expect(waited).toBeLessThan(5_000) // bounded by connectionTimeoutMillis x retries, never a hang

    await txn.commit()
    await plain.send({ topic, messages: [{ value: 'after' }] })
    expect((await rowsOf(topic)).sort()).toEqual(['after', 'before', 'in-txn'])

    expect(await countBackends(t.db.pool, app)).toBeGreaterThan(0)
    await plain.disconnect()
    await transactional.disconnect()
    await waitFor(async () => (await countBackends(t.db.pool, app)) === 0, { timeout: 5_000 })
  })
})

describe('statement timeouts', () => {
  it('pool.statementTimeoutMillis: a blocked send fails with a retriable statement-timeout error, the retrier rides it out, nothing half-written', async () => {
    const app = uniqueAppName('stmt')
    const kafka = t.newKafka({ connectionString: withAppName(t.db.connectionString, app), pool: { statementTimeoutMillis: 300 } })
    const topic = uniqueName('stmt')
    const noRetry = kafka.producer({ retry: { retries: 0 } })
    const patient = kafka.producer({ retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 500 } })
    await noRetry.connect()
    await patient.connect()
    await noRetry.send({ topic, messages: [{ value: 'first', partition: 0 }] })

    const lock = await lockPartition(topic)
    const started = Date.now()
    const err = await failure(noRetry.send({ topic, messages: [{ value: 'timed-out', partition: 0 }] }))
    const took = Date.now() - started
    console.log(`statement timeout: ${err.name} after ${took} ms: ${err.message}`)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err.message).toMatch(/statement timeout/)
    expect(err.message).toMatch(/57014/)
    expect(err.cause?.retriable).toBe(true)
    expect(took).toBeGreaterThanOrEqual(250)

    // released while the retrier is still trying: the send goes through
    const sending = patient.send({ topic, messages: [{ value: 'retried', partition: 0 }] })
    await sleep(800)
    await lock.release()
    await sending
    await noRetry.send({ topic, messages: [{ value: 'last', partition: 0 }] })
    expect(await rowsOf(topic)).toEqual(['first', 'retried', 'last'])

    await noRetry.disconnect()
    await patient.disconnect()
    await waitFor(async () => (await countBackends(t.db.pool, app)) === 0, { timeout: 5_000 })
  })

  it('a consumer whose statements time out (its group tables locked) recovers by itself once the lock goes', async () => {
    const app = uniqueAppName('stmtc')
    const logged: string[] = []
    const kafka = new Kafka({
      clientId: 'stmtc',
      logLevel: logLevel.ERROR,
      logCreator:
        () =>
        ({ log }) =>
          void logged.push(log.message),
      pgqueue: { ...t.db.options, connectionString: withAppName(t.db.connectionString, app), pool: { statementTimeoutMillis: 300 } },
    })
    const topic = uniqueName('stmtc')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'm-0', partition: 0 }] })
    const consumer = kafka.consumer({
      groupId: uniqueName('g'),
      sessionTimeout: 6000,
      heartbeatInterval: 200,
      maxWaitTimeInMs: 500,
      retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 30 },
    })
    const got: Array<{ value: string; at: number }> = []
    const crashes: string[] = []
    consumer.on(consumer.events.CRASH, (e) => void crashes.push(`${e.payload.error.name}: ${e.payload.error.message}`))
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => void got.push({ value: message.value!.toString(), at: Date.now() }) })
    await waitFor(() => got.length === 1, { timeout: 15_000 })

    // every heartbeat (members and leases) now waits past the 300 ms statement timeout
    const locker = await t.db.connect()
    await locker.query('BEGIN')
    await locker.query(`LOCK TABLE ${tables().groupMember}, ${tables().partitionLease} IN ACCESS EXCLUSIVE MODE`)
    await sleep(1000)
    await producer.send({ topic, messages: [{ value: 'm-1', partition: 0 }] })
    await sleep(1500)
    const beforeUnlock = got.length
    await locker.query('ROLLBACK')
    const unlockedAt = Date.now()
    await waitFor(() => got.some((g) => g.value === 'm-1'), { timeout: 15_000 })
    const recovery = got.find((g) => g.value === 'm-1')!.at - unlockedAt
    const timeouts = logged.filter((m) => /statement timeout/.test(m)).length
    console.log(
      `consumer under statement timeouts: ${timeouts} errors logged while locked, m-1 delivered ${recovery} ms after the lock went; crashes: ${JSON.stringify(crashes)}`,
    )
    expect(timeouts).toBeGreaterThan(0)
    expect(beforeUnlock).toBe(1)
    expect(got.map((g) => g.value)).toEqual(['m-0', 'm-1'])

    await consumer.disconnect()
    await waitFor(async () => (await countBackends(t.db.pool, app)) === 0, { timeout: 5_000 })
  })

  it('DATAHUB_PGQUEUE_STATEMENT_TIMEOUT_MS sets the timeout too', async () => {
    vi.stubEnv('DATAHUB_PGQUEUE_STATEMENT_TIMEOUT_MS', '250')
    const app = uniqueAppName('stmtenv')
    const kafka = t.newKafka({ connectionString: withAppName(t.db.connectionString, app) })
    expect(kafka.config.pool.statementTimeoutMillis).toBe(250)
    const topic = uniqueName('stmtenv')
    const producer = kafka.producer({ retry: { retries: 0 } })
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'first', partition: 0 }] })
    const lock = await lockPartition(topic)
    const err = await failure(producer.send({ topic, messages: [{ value: 'timed-out', partition: 0 }] }))
    await lock.release()
    expect(err.message).toMatch(/statement timeout/)
    await producer.send({ topic, messages: [{ value: 'after', partition: 0 }] })
    expect(await rowsOf(topic)).toEqual(['first', 'after'])
    await producer.disconnect()
    await waitFor(async () => (await countBackends(t.db.pool, app)) === 0, { timeout: 5_000 })
  })
})

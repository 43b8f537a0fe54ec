// Every identifier that can reach SQL: schema and table prefix are refused unless they are plain SQL names (they
// are spliced into statements, quoted); topic names follow Kafka's rules; group ids, client ids, transactional ids
// and header names may hold quotes, SQL and unicode, because they only ever travel as bound values — they round-trip
// verbatim and never run. Control characters (NUL above all) are refused up front.
import { beforeAll, describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { snapshot } from './snapshot.js'

const t = useTestKafka('input_identifiers')
const EVIL = ['x"; DROP TABLE y; --', "'", "o'neil'); DELETE FROM metadata_queue_message; --", 'grüppe-日本-🎉', '$1 $$ \\x00 %s']

beforeAll(async () => {
  // a decoy the injection strings name, and the real tables: all must still be there at the end
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.disconnect()
  await t.db.pool.query(`CREATE TABLE "${t.db.schema}".y (id int)`)
})

async function tablesIntact() {
  const snap = await snapshot(t.db.pool, t.db.schema)
  expect(Object.keys(snap)).toContain('y')
  expect(Object.keys(snap)).toContain('metadata_queue_message')
  expect(Object.keys(snap)).toContain('metadata_queue_topic')
}

describe('schema and table prefix', () => {
  it.each([
    ['schema', 'x"; DROP TABLE y; --'],
    ['schema', "q'"],
    ['schema', 'schéma'],
    ['schema', 'a\u0000b'],
    ['schema', 's'.repeat(64)],
    ['tablePrefix', 'p; DROP SCHEMA public'],
    ['tablePrefix', 'p"'],
    ['tablePrefix', 'p'.repeat(41)],
  ])('%s %j is refused by the constructor, naming the option; no schema is created', async (option, value) => {
    expect(() => new Kafka({ logLevel: logLevel.NOTHING, pgqueue: { ...t.db.options, [option]: value } })).toThrow(new RegExp(`options\\.${option}`))
    // (text parameters cannot carry NUL: look for the name without it)
    const { rowCount } = await t.db.pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [value.toLowerCase().replace(/\0/g, '')])
    expect(rowCount).toBe(0)
  })
})

describe('group ids', () => {
  it.each(EVIL)('group id %j works end to end and is stored verbatim', async (groupId) => {
    const topic = uniqueName('grp')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'hello', partition: 0 }] })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const got = deferred<string>()
    await consumer.run({ eachMessage: async ({ message }) => got.resolve(message.value!.toString()) })
    expect(await got.promise).toBe('hello')
    await waitFor(async () => {
      const { rows } = await t.db.pool.query(
        `SELECT offset_value::int AS o FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1`,
        [groupId],
      )
      return rows.some((r) => r.o === 1)
    })
    await consumer.disconnect()
    const admin = t.kafka.admin()
    await admin.connect()
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] })
    expect(offsets[0].partitions.find((p) => p.partition === 0)?.offset).toBe('1')
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).toContain(groupId)
    await admin.deleteGroups([groupId])
    await admin.disconnect()
    await tablesIntact()
  })

  it.each(['a\u0000b', 'new\nline', 'g'.repeat(256), ''])('group id %j is refused when the consumer is made', async (groupId) => {
    const before = await snapshot(t.db.pool, t.db.schema)
    expect(() => t.kafka.consumer({ groupId })).toThrow(KafkaJSNonRetriableError)
    expect(await snapshot(t.db.pool, t.db.schema)).toEqual(before)
  })
})

describe('client ids', () => {
  it('a client id with quotes and SQL is stored verbatim in the member rows', async () => {
    const clientId = EVIL[0]
    const kafka = new Kafka({ clientId, logLevel: logLevel.NOTHING, pgqueue: t.db.options })
    const topic = uniqueName('cid')
    const groupId = uniqueName('g')
    const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 500 })
    await consumer.connect()
    await consumer.subscribe({ topic })
    const joined = deferred()
    consumer.on(consumer.events.GROUP_JOIN, () => joined.resolve())
    await consumer.run({ eachMessage: async () => undefined })
    await joined.promise
    const { rows } = await t.db.pool.query(`SELECT client_id FROM "${t.db.schema}".metadata_queue_group_member WHERE consumer_group = $1`, [groupId])
    expect(rows.map((r) => r.client_id)).toEqual([clientId])
    await consumer.disconnect()
    await tablesIntact()
  })

  it.each(['a\u0000b', 'c'.repeat(256), 42])('client id %j is refused by the constructor', (clientId) => {
    expect(() => new Kafka({ clientId: clientId as string, logLevel: logLevel.NOTHING, pgqueue: t.db.options })).toThrow(KafkaJSNonRetriableError)
  })
})

describe('transactional ids', () => {
  it.each([...EVIL, 'tab\tid', 't'.repeat(300)])('transactional id %j works and is stored verbatim', async (transactionalId) => {
    const topic = uniqueName('txid')
    const producer = await t.producer({ transactionalId })
    const txn = await producer.transaction()
    await txn.send({ topic, messages: [{ value: 'in txn' }] })
    await txn.commit()
    const { rows } = await t.db.pool.query(
      `SELECT transactional_id FROM "${t.db.schema}".metadata_queue_transactional_producer WHERE transactional_id = $1`,
      [transactionalId],
    )
    expect(rows).toHaveLength(1)
    await tablesIntact()
  })

  // Today a NUL reaches PostgreSQL ("invalid byte sequence for encoding UTF8: 0x00") at transaction(), unlike
  // group and client ids, which are checked when the consumer / Kafka is made.
  it.each(['a\u0000b', '\u0000'])('transactional id %j is refused up front with a clear message', async (transactionalId) => {
    const before = await snapshot(t.db.pool, t.db.schema)
    let error: Error | undefined
    try {
      const producer = await t.producer({ transactionalId })
      await producer.transaction()
    } catch (e) {
      error = e as Error
    }
    expect(error).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(error?.message).toMatch(/transactional ?id/i)
    expect(await snapshot(t.db.pool, t.db.schema)).toEqual(before)
  })
})

describe('topics reaching SQL through the consumer and the admin', () => {
  // subscribe() checks the type only; run() then auto-creates whatever name it was given.
  it.each(['x"; DROP TABLE y; --', 'bad topic', 'a'.repeat(250), 'tópico'])('subscribe to %j is refused and creates no topic', async (topic) => {
    const before = await snapshot(t.db.pool, t.db.schema)
    const consumer = await t.consumer()
    let error: Error | undefined
    try {
      await consumer.subscribe({ topic })
      await consumer.run({ eachMessage: async () => undefined })
    } catch (e) {
      error = e as Error
    }
    await consumer.disconnect()
    expect(error).toBeInstanceOf(KafkaJSError)
    expect(await snapshot(t.db.pool, t.db.schema)).toEqual(before)
    await tablesIntact()
  })

  it('admin.createTopics refuses bad names with INVALID_TOPIC_EXCEPTION and creates none of them', async () => {
    const admin = t.kafka.admin()
    await admin.connect()
    const before = await snapshot(t.db.pool, t.db.schema)
    const err = (await admin
      .createTopics({ topics: [{ topic: 'z"; DROP TABLE y; --' }, { topic: 'b'.repeat(250) }, { topic: "o'neil" }] })
      .catch((e: unknown) => e)) as { name: string; errors?: Array<{ type: string }> }
    expect(err.name).toBe('KafkaJSAggregateError')
    expect(err.errors?.map((e) => e.type)).toEqual(['INVALID_TOPIC_EXCEPTION', 'INVALID_TOPIC_EXCEPTION', 'INVALID_TOPIC_EXCEPTION'])
    await expect(admin.fetchTopicMetadata({ topics: ['z"; DROP TABLE y; --'] })).rejects.toBeInstanceOf(KafkaJSError)
    await expect(admin.deleteTopics({ topics: ["'; DROP TABLE y; --"] })).rejects.toBeInstanceOf(KafkaJSError)
    expect(await snapshot(t.db.pool, t.db.schema)).toEqual(before)
    await admin.disconnect()
    await tablesIntact()
  })
})

describe('header names and values', () => {
  it('quotes, SQL and unicode in header names and values round-trip byte for byte', async () => {
    const topic = uniqueName('hdr')
    const producer = await t.producer()
    const headers = { 'x"; DROP TABLE y; --': "'); DROP TABLE y; --", 'ünï-日本': Buffer.from([0, 1, 255]), "'": ['a', 'b'] }
    await producer.send({ topic, messages: [{ key: 'k\'"', value: 'v', headers, partition: 0 }] })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const got = deferred<Record<string, unknown>>()
    await consumer.run({ eachMessage: async ({ message }) => got.resolve({ key: message.key, headers: message.headers }) })
    const m = await got.promise
    expect(m.key).toEqual(Buffer.from('k\'"'))
    expect(m.headers).toEqual({
      'x"; DROP TABLE y; --': Buffer.from("'); DROP TABLE y; --"),
      'ünï-日本': Buffer.from([0, 1, 255]),
      "'": [Buffer.from('a'), Buffer.from('b')],
    })
    await tablesIntact()
  })
})

// The three least-privilege roles of src/store/roles.ts, used through the library by LOGIN roles of their own (a pool
// needs a real login, SET ROLE is not enough): each can do its job, is refused the rest, and the runtime never needs
// a superuser.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoles, roleNames, type QueueRoles } from '../../../src/store/roles.js'
import { Kafka } from '../../../src/kafka.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { dropTestRoles } from '../../helpers/roles.js'

const t = useTestKafka('security_roles')
const PREFIX = 'metadata_queue'
const password = `pw-${randomBytes(6).toString('hex')}`
let roles: QueueRoles
let logins: { writer: string; reader: string; admin: string; both: string }
let topic: string
const clients: pg.Client[] = []

const urlAs = (user: string) => {
  const u = new URL(t.db.connectionString)
  u.username = user
  u.password = password
  return u.toString()
}

function kafkaAs(user: string, extra: Record<string, unknown> = {}): Kafka {
  return new Kafka({
    clientId: user,
    logLevel: logLevel.NOTHING,
    // no migrations and no in-app maintenance: that is the admin's job
    pgqueue: { connectionString: urlAs(user), schema: t.db.schema, enabled: false, maintenance: { enabled: false }, ...extra },
  })
}

async function sqlAs(user: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: urlAs(user) })
  c.on('error', () => undefined)
  await c.connect()
  clients.push(c)
  return c
}

/** The statement fails with insufficient_privilege (42501). */
async function denied(c: pg.Client, sql: string, params: unknown[] = []): Promise<void> {
  await c.query('SAVEPOINT s')
  const err = await c.query(sql, params).then(
    () => undefined,
    (e: { code?: string; message: string }) => e,
  )
  await c.query('ROLLBACK TO SAVEPOINT s')
  expect(err, `expected "${sql}" to be refused`).toBeDefined()
  expect(err!.code, err!.message).toBe('42501')
}

const T = (suffix: string) => `"${t.db.schema}"."${PREFIX}_${suffix}"`

beforeAll(async () => {
  // the schema is migrated by the superuser of the test database (t.db.options has enabled: true)
  topic = uniqueName('sec')
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
  await admin.disconnect()
  roles = await createRoles(t.db.pool, { schema: t.db.schema, prefix: PREFIX, rolePrefix: t.db.schema })
  logins = { writer: `${t.db.schema}_wl`, reader: `${t.db.schema}_rl`, admin: `${t.db.schema}_al`, both: `${t.db.schema}_bl` }
  const grants: Record<keyof typeof logins, string[]> = {
    writer: [roles.writer],
    reader: [roles.reader],
    admin: [roles.admin],
    both: [roles.writer, roles.reader],
  }
  for (const [k, login] of Object.entries(logins) as Array<[keyof typeof logins, string]>) {
    await t.db.pool.query(`CREATE ROLE "${login}" LOGIN PASSWORD '${password}' NOSUPERUSER NOCREATEDB NOCREATEROLE`)
    for (const r of grants[k]) await t.db.pool.query(`GRANT "${r}" TO "${login}"`)
  }
})

// runs before useTestSchema's own afterAll (hooks run in reverse): the roles go first, then the schema
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)))
  await dropTestRoles(t.db.pool, [...Object.values(logins ?? {}), ...Object.values(roles ?? {})])
})

describe('roles', () => {
  it('names follow <rolePrefix>_writer/_reader/_admin; bad prefixes are refused; createRoles is idempotent', async () => {
    expect(roleNames({ prefix: 'metadata_queue' })).toEqual({
      writer: 'metadata_queue_writer',
      reader: 'metadata_queue_reader',
      admin: 'metadata_queue_admin',
    })
    expect(() => roleNames({ prefix: 'p', rolePrefix: 'x"; DROP ROLE postgres; --' })).toThrow(KafkaJSNonRetriableError)
    expect(() => roleNames({ prefix: 'p', rolePrefix: 'r'.repeat(60) })).toThrow(KafkaJSNonRetriableError)
    await expect(createRoles(t.db.pool, { schema: 'no_such_schema_here', prefix: PREFIX, rolePrefix: t.db.schema })).rejects.toThrow(
      /run the migrations first/,
    )
    expect(await createRoles(t.db.pool, { schema: t.db.schema, prefix: PREFIX, rolePrefix: t.db.schema })).toEqual(roles)
    const { rows } = await t.db.pool.query('SELECT rolname, rolcanlogin, rolsuper FROM pg_roles WHERE rolname = ANY($1) ORDER BY 1', [
      Object.values(roles),
    ])
    expect(rows.map((r) => [r.rolname, r.rolcanlogin, r.rolsuper])).toEqual(
      Object.values(roles)
        .sort()
        .map((n) => [n, false, false]),
    )
  })

  it('the runtime never needs a superuser: the writer produces (plain, auto-created topic, idempotent, transactional), the reader consumes and commits', async () => {
    const { rows } = await t.db.pool.query('SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = ANY($1)', [
      [logins.writer, logins.reader],
    ])
    for (const r of rows) expect([r.rolsuper, r.rolcreaterole, r.rolcreatedb]).toEqual([false, false, false])

    const writer = kafkaAs(logins.writer)
    const producer = writer.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ key: 'a', value: 'plain' }] })
    const fresh = uniqueName('sec-auto')
    await producer.send({ topic: fresh, messages: [{ value: 'auto-created' }] })
    const idempotent = writer.producer({ idempotent: true })
    await idempotent.connect()
    await idempotent.send({ topic, messages: [{ key: 'b', value: 'idempotent' }] })
    const transactional = writer.producer({ transactionalId: uniqueName('sec-txn') })
    await transactional.connect()
    const txn = await transactional.transaction()
    await txn.send({ topic, messages: [{ key: 'c', value: 'transactional' }] })
    await txn.commit()
    // message partitions are made on demand by a SECURITY DEFINER function: the writer can extend them, within the
    // window around now() (test/integration/maintenance/partitionWindow.test.ts)
    const w = await sqlAs(logins.writer)
    const made = await w.query(`SELECT ${T('ensure_partitions')}(now() + interval '4 days') AS n`)
    expect(made.rows[0].n).toBeGreaterThan(0)

    const reader = kafkaAs(logins.reader)
    const consumer = reader.consumer({ groupId: uniqueName('sec-g'), sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 500 })
    const got: string[] = []
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) })
    await waitFor(() => got.length === 3, { timeout: 15_000 })
    expect(got.sort()).toEqual(['idempotent', 'plain', 'transactional'])
    await consumer.disconnect()
    const { rows: offsets } = await t.db.pool.query(
      `SELECT sum(offset_value)::int AS n FROM ${T('consumer_offset')} o JOIN ${T('topic')} tp ON tp.id = o.topic_id WHERE tp.topic_name = $1`,
      [topic],
    )
    expect(offsets[0].n).toBe(3)
    await Promise.all([producer.disconnect(), idempotent.disconnect(), transactional.disconnect()])
  })

  it('outbox at SERIALIZABLE: the writer stages and its client numbers; a reader may drive the numbering too', async () => {
    const outboxTopic = uniqueName('sec-outbox')
    const writer = kafkaAs(logins.writer)
    const quiet = kafkaAs(logins.writer, { listen: false })
    const [producer, quietProducer] = [writer.producer(), quiet.producer()]
    await producer.connect()
    await quietProducer.connect()
    const w = await sqlAs(logins.writer)
    await w.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
    await producer.sendWith(w, { topic: outboxTopic, messages: [{ key: 'by-writer', value: 'x' }] })
    await w.query('COMMIT')
    await waitFor(async () => (await t.db.pool.query(`SELECT 1 FROM ${T('message')} WHERE routing_key = 'by-writer'`)).rowCount === 1, {
      timeout: 15_000,
    })
    // no client listens now: the staged message waits for a driver
    await producer.disconnect()
    await w.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    await quietProducer.sendWith(w, { topic: outboxTopic, messages: [{ key: 'by-reader', value: 'x' }] })
    await w.query('COMMIT')
    const r = await sqlAs(logins.reader)
    expect((await r.query(`SELECT ${T('number_outbox')}() AS n`)).rows[0].n).toBe(1)
    const { rows } = await t.db.pool.query(
      `SELECT m.enqueue_seq::int AS seq FROM ${T('message')} m JOIN ${T('topic')} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 ORDER BY 1`,
      [outboxTopic],
    )
    expect(rows).toEqual([{ seq: 1 }, { seq: 2 }])
    await quietProducer.disconnect()
  })

  it('a login with both roles runs exactly-once consume-transform-produce (sendOffsets)', async () => {
    const k = kafkaAs(logins.both)
    const groupId = uniqueName('sec-eos')
    const producer = k.producer({ transactionalId: uniqueName('sec-eos-txn') })
    await producer.connect()
    const txn = await producer.transaction()
    await txn.send({ topic: uniqueName('sec-out'), messages: [{ value: 'out' }] })
    await txn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] })
    await txn.commit()
    await producer.disconnect()
  })

  it('the writer cannot read messages, commit offsets, consume, drop or alter anything', async () => {
    const w = await sqlAs(logins.writer)
    await w.query('BEGIN')
    await denied(w, `SELECT payload FROM ${T('message')} LIMIT 1`)
    await denied(w, `SELECT routing_key FROM ${T('message')} LIMIT 1`)
    await denied(w, `SELECT headers FROM ${T('message')} LIMIT 1`)
    await denied(w, `SELECT * FROM ${T('message')} LIMIT 1`)
    // where the log starts is all it sees (the send result's logStartOffset)
    await w.query(`SELECT min(enqueue_seq) FROM ${T('message')} WHERE topic_id = 1 AND partition_id = 0`)
    await denied(w, `DELETE FROM ${T('message')}`)
    await denied(w, `UPDATE ${T('message')} SET priority = 0`)
    await denied(w, `TRUNCATE ${T('message')}`)
    await denied(
      w,
      `INSERT INTO ${T('consumer_offset')} (consumer_group, topic_id, partition_id, offset_value) SELECT 'g', id, 0, 1 FROM ${T('topic')} LIMIT 1`,
    )
    await denied(w, `UPDATE ${T('consumer_offset')} SET offset_value = 0`)
    await denied(w, `SELECT * FROM ${T('consumer_offset')}`)
    await denied(
      w,
      `INSERT INTO ${T('group_member')} (consumer_group, member_id, client_id, client_host, session_timeout_ms) VALUES ('g', 'm', 'c', 'h', 1000)`,
    )
    await denied(w, `DROP TABLE ${T('message')}`)
    await denied(w, `DROP TABLE ${T('topic')} CASCADE`)
    await denied(w, `ALTER TABLE ${T('message')} ADD COLUMN x int`)
    await denied(w, `CREATE TABLE "${t.db.schema}".intruder (id int)`)
    await denied(w, `DROP SCHEMA "${t.db.schema}" CASCADE`)
    await w.query('ROLLBACK')

    // and through the library: its consumer is refused with a clear, non-retriable KafkaJS error
    const consumer = kafkaAs(logins.writer).consumer({ groupId: uniqueName('sec-w'), sessionTimeout: 6000, heartbeatInterval: 500 })
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    const err = await consumer.run({ eachMessage: async () => undefined }).then(
      () => undefined,
      (e: Error) => e,
    )
    await consumer.disconnect()
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err!.message).toMatch(/permission denied/)
  })

  it('the reader cannot produce, delete, drop or alter anything', async () => {
    const producer = kafkaAs(logins.reader).producer({ retry: { retries: 0 } })
    await producer.connect()
    const err = await producer.send({ topic, messages: [{ value: 'nope' }] }).then(
      () => undefined,
      (e: Error) => e,
    )
    await producer.disconnect()
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err!.message).toMatch(/permission denied/)

    const r = await sqlAs(logins.reader)
    await r.query('BEGIN')
    await denied(
      r,
      `INSERT INTO ${T('message')} (topic_id, partition_id, routing_key, enqueue_seq, payload) SELECT id, 0, '', 999, '\\x00' FROM ${T('topic')} LIMIT 1`,
    )
    await denied(r, `UPDATE ${T('partition_seq')} SET next_seq = next_seq + 1`)
    await denied(r, `DELETE FROM ${T('message')}`)
    await denied(r, `UPDATE ${T('message')} SET payload = '\\x00'`)
    await denied(
      r,
      `INSERT INTO ${T('topic')} (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic, max_total_payload_bytes) VALUES ('x', 1, 0, 0, 0)`,
    )
    await denied(r, `DELETE FROM ${T('consumer_offset')}`)
    await denied(r, `TRUNCATE ${T('consumer_offset')}`)
    await denied(r, `DROP TABLE ${T('message')}`)
    await denied(r, `ALTER TABLE ${T('consumer_offset')} DROP COLUMN metadata`)
    await denied(r, `CREATE TABLE "${t.db.schema}".intruder (id int)`)
    await r.query('ROLLBACK')
    // nothing the reader tried is there
    const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM ${T('message')} WHERE convert_from(payload, 'UTF8') = 'nope'`)
    expect(rows[0].n).toBe(0)
  })

  it('the admin owns the schema: topic admin, retention deletes and DDL', async () => {
    const admin = kafkaAs(logins.admin).admin()
    await admin.connect()
    const extra = uniqueName('sec-admin')
    await admin.createTopics({ topics: [{ topic: extra, numPartitions: 1 }] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '-1' }] })
    await admin.deleteTopics({ topics: [extra] })
    await admin.disconnect()
    const a = await sqlAs(logins.admin)
    await a.query('BEGIN')
    await a.query(`DELETE FROM ${T('message')} WHERE enqueued_at < now() - interval '30 days'`)
    await a.query(`ALTER TABLE ${T('message')} ADD COLUMN scratch int`)
    await a.query(`DROP TABLE ${T('message_group_lease')}`)
    await a.query('ROLLBACK')
    const { rows } = await a.query('SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = $1', [t.db.schema])
    expect(rows[0].owner).toBe(roles.admin)
  })

  // migrate() runs `CREATE SCHEMA IF NOT EXISTS` first, and PostgreSQL checks CREATE on the DATABASE before it looks
  // whether the schema exists: the schema's owner is refused "permission denied for database".
  it('the admin role runs the migrations (enabled: true) without CREATE on the database', async () => {
    const k = kafkaAs(logins.admin, { enabled: true })
    const admin = k.admin()
    const err = await admin.connect().then(
      () => undefined,
      (e: Error) => e,
    )
    await admin.disconnect()
    expect(err?.message, err?.message).toBeUndefined()
  })
})

// Passwords and connection strings never reach the logs: every log entry of a full run (connect, produce, consume,
// admin, disconnect, failures) at DEBUG level is captured through a logCreator and searched for the password, in
// plain and URL-encoded form, and for the raw connection string. Thrown errors are searched too.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import type { PgQueueOptions } from '../../../src/config/types.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('security_secrets')
const login = `${t.db.schema}_sl`
const password = `S3cr3t!${randomBytes(6).toString('hex')}@#`
const forms = [password, encodeURIComponent(password), password.slice(0, 12)]
const entries: unknown[] = []
const errors: unknown[] = []

const urlWith = (user: string, pw?: string, port?: string) => {
  const u = new URL(t.db.connectionString)
  u.username = user
  u.password = pw === undefined ? '' : encodeURIComponent(pw)
  if (port) u.port = port
  return u.toString()
}

function capturingKafka(pgqueue: PgQueueOptions): Kafka {
  return new Kafka({
    clientId: 'secrets',
    logLevel: logLevel.DEBUG,
    logCreator: () => (entry) => void entries.push(entry),
    pgqueue: { schema: t.db.schema, maintenance: { enabled: false }, ...pgqueue },
  })
}

beforeAll(async () => {
  // migrate with the superuser, then work as a password-protected login that owns nothing
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.disconnect()
  await t.db.pool.query(`CREATE ROLE "${login}" LOGIN PASSWORD '${password}'`)
  await t.db.pool.query(`GRANT USAGE ON SCHEMA "${t.db.schema}" TO "${login}"`)
  await t.db.pool.query(`GRANT ALL ON ALL TABLES IN SCHEMA "${t.db.schema}" TO "${login}"`)
  await t.db.pool.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA "${t.db.schema}" TO "${login}"`)
})

afterAll(async () => {
  await t.db.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [login])
  await t.db.pool.query(`DROP OWNED BY "${login}"`).catch(() => undefined)
  await t.db.pool.query(`DROP ROLE IF EXISTS "${login}"`)
})

async function attempt(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn()
  } catch (e) {
    errors.push(e)
  }
}

const dump = (xs: unknown[]) =>
  JSON.stringify(xs, (_k, v: unknown) =>
    v instanceof Error ? { name: v.name, message: v.message, stack: v.stack, cause: (v as { cause?: unknown }).cause } : v,
  )

describe('secrets', () => {
  it('a full run with the password in the URL, in options and in the environment logs neither the password nor the URL', async () => {
    const viaUrl = capturingKafka({ connectionString: urlWith(login, password), enabled: false })
    const topic = uniqueName('secret')
    const producer = viaUrl.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'v' }] })
    const consumer = viaUrl.consumer({ groupId: uniqueName('g'), sessionTimeout: 6000, heartbeatInterval: 300, maxWaitTimeInMs: 300 })
    const got: string[] = []
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) })
    await waitFor(() => got.length === 1, { timeout: 10_000 })
    const admin = viaUrl.admin()
    await admin.connect()
    await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.disconnect()
    await consumer.disconnect()
    await producer.disconnect()

    // the password as a separate option
    const viaOption = capturingKafka({ connectionString: urlWith(login), connection: { password }, enabled: false })
    const p2 = viaOption.producer()
    await p2.connect()
    await p2.send({ topic, messages: [{ value: 'v2' }] })
    await p2.disconnect()

    // the password in DATAHUB_PGQUEUE_DATASOURCE_PASSWORD
    vi.stubEnv('DATAHUB_PGQUEUE_DATASOURCE_URL', urlWith(login))
    vi.stubEnv('DATAHUB_PGQUEUE_DATASOURCE_PASSWORD', password)
    try {
      const viaEnv = capturingKafka({ enabled: false })
      const p3 = viaEnv.producer()
      await p3.connect()
      await p3.send({ topic, messages: [{ value: 'v3' }] })
      await p3.disconnect()
    } finally {
      vi.unstubAllEnvs()
    }

    // failures: nothing listening there, and a producer whose connection is cut mid-run
    const nowhere = capturingKafka({ connectionString: urlWith(login, password, '1'), enabled: false, pool: { connectionTimeoutMillis: 500 } })
    await attempt(() => nowhere.producer().connect())
    await attempt(() => nowhere.admin().connect())
    const cut = capturingKafka({ connectionString: urlWith(login, password), enabled: false })
    const p4 = cut.producer({ retry: { retries: 1, initialRetryTime: 50 } })
    await p4.connect()
    await t.db.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [login])
    await attempt(() => p4.send({ topic, messages: [{ value: 'after cut' }] }))
    await p4.disconnect()

    const logs = dump(entries)
    const thrown = dump(errors)
    console.log(`secrets: ${entries.length} log entries and ${errors.length} errors searched`)
    expect(entries.length).toBeGreaterThan(5)
    expect(errors.length).toBeGreaterThan(0)
    for (const form of forms) {
      expect(logs).not.toContain(form)
      expect(thrown).not.toContain(form)
    }
    expect(logs).not.toContain(urlWith(login, password))
    // what is logged about the connection is the redacted form
    expect(logs).toMatch(new RegExp(`postgres://${login}@`))
  })
})

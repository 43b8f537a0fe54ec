// Host lists against the shared server: a dead first host is skipped, one probing round serves every waiting
// connect, a read-only session is refused with a retriable error, and a Kafka client (pool and LISTEN) works through
// a list. The failover itself (a real standby promoted) is in test/faults/failover.test.ts.
import net from 'node:net'
import pg from 'pg'
import { afterAll, describe, expect, inject, it, vi } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import { resolvePoolConfig } from '../../../src/db/connection.js'
import { KafkaJSConnectionError } from '../../../src/kafkajs/errors.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const live = new URL(inject('pgUrl'))
const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers) await close()
})

/** A port that accepts and at once drops every connection, counting them: a host that is up but never answers. */
async function droppingHost(): Promise<{ port: number; accepted: () => number }> {
  let accepted = 0
  const server = net.createServer((socket) => {
    accepted++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return { port: (server.address() as net.AddressInfo).port, accepted: () => accepted }
}

function listUrl(first: string, params: Record<string, string>): string {
  const url = new URL(live)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString().replace(`@${live.host}`, `@${first},${live.host}`)
}

async function poolFor(connectionString: string): Promise<pg.Pool> {
  const config = resolveConfig({ connectionString, pool: { max: 10, connectionTimeoutMillis: 5000 } }, {})
  const { poolConfig } = await resolvePoolConfig(config)
  const pool = new pg.Pool(poolConfig)
  closers.push(() => pool.end())
  return pool
}

describe('connection host lists', () => {
  it('skips a host that drops connections; concurrent connects share one probing round', async () => {
    const dead = await droppingHost()
    const pool = await poolFor(listUrl(`127.0.0.1:${dead.port}`, { target_session_attrs: 'read-write' }))
    const ports = await Promise.all(
      Array.from({ length: 8 }, async () => (await pool.query<{ port: number }>('SELECT inet_server_port() AS port')).rows[0]!.port),
    )
    expect(new Set(ports)).toEqual(new Set([Number(live.port || 5432)]))
    expect(dead.accepted()).toBe(1)
  })

  it('refuses read-only sessions with a retriable connection error naming every host', async () => {
    const dead = await droppingHost()
    const pool = await poolFor(
      listUrl(`127.0.0.1:${dead.port}`, { target_session_attrs: 'read-write', options: '-c default_transaction_read_only=on' }),
    )
    const error = await pool.query('SELECT 1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(KafkaJSConnectionError)
    expect((error as KafkaJSConnectionError).retriable).toBe(true)
    expect((error as Error).message).toContain(`127.0.0.1:${dead.port}`)
    expect((error as Error).message).toContain(`${live.hostname}:${live.port || 5432}: read-only`)
  })

  it('takes the list from PGHOST/PGPORT/PGTARGETSESSIONATTRS as libpq does', async () => {
    const dead = await droppingHost()
    // pg reads the user, database and password from PG* itself; host and port come from the list
    vi.stubEnv('PGUSER', decodeURIComponent(live.username) || 'postgres')
    vi.stubEnv('PGDATABASE', live.pathname.slice(1))
    if (live.password) vi.stubEnv('PGPASSWORD', decodeURIComponent(live.password))
    try {
      const env = { PGHOST: `127.0.0.1,${live.hostname}`, PGPORT: `${dead.port},${live.port || 5432}`, PGTARGETSESSIONATTRS: 'read-write' }
      const config = resolveConfig({ pool: { max: 4, connectionTimeoutMillis: 5000 } }, env)
      const { poolConfig } = await resolvePoolConfig(config)
      const pool = new pg.Pool(poolConfig)
      closers.push(() => pool.end())
      // before: pg looked up the host "127.0.0.1,<host>" (ENOTFOUND)
      const { rows } = await pool.query<{ port: number }>('SELECT inet_server_port() AS port')
      expect(rows[0]!.port).toBe(Number(live.port || 5432))
      expect(dead.accepted()).toBe(1)
    } finally {
      vi.unstubAllEnvs()
    }
  })

  describe('a Kafka client on a host list', () => {
    const dead = net.createServer((s) => s.destroy())
    const t = useTestKafka('hostlist')
    it('produces and consumes (pool and LISTEN connection) through the list', async () => {
      await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
      closers.push(() => new Promise((resolve) => dead.close(() => resolve())))
      const url = listUrl(`127.0.0.1:${(dead.address() as net.AddressInfo).port}`, { target_session_attrs: 'primary' })
      const kafka = t.newKafka({ connectionString: url })
      const topic = uniqueName('hosts')
      const producer = kafka.producer()
      const consumer = kafka.consumer({ groupId: uniqueName('g') })
      await producer.connect()
      await consumer.connect()
      try {
        await consumer.subscribe({ topic, fromBeginning: true })
        const got = new Promise<string>((resolve) => void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) }))
        await producer.send({ topic, messages: [{ value: 'through the list' }] })
        expect(await got).toBe('through the list')
      } finally {
        await consumer.disconnect()
        await producer.disconnect()
      }
    })
  })
})

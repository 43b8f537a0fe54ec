// Issue #34 item 3: the transactional outbox at REPEATABLE READ and SERIALIZABLE. Such a caller's messages are staged
// unnumbered and numbered after its COMMIT by a step any client drives (docs/decisions/outbox-010-staged-numbering.md).
// Before: sendWith was refused in those transactions (0A000). Promised here: consumers see contiguous offsets only,
// in commit order per partition; rollbacks leave nothing; concurrent SERIALIZABLE outbox transactions meet no
// serialization failure of ours; two drivers or a killed driver number each message once; an open transaction
// beside it is never waited for.
import type pg from 'pg'
import type { ProducerConfig } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { tablesFor } from '../../../src/db/tables.js'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { numberOutbox } from '../../../src/store/outboxStaging.js'
import { spawnFixture } from '../../helpers/processes.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('outbox-isolation')
const tables = tablesFor(t.db.schema, 'metadata_queue')
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`
const LEVELS = ['REPEATABLE READ', 'SERIALIZABLE'] as const

interface Row {
  partition: number
  seq: number
  key: string
}

async function log(topic: string): Promise<Row[]> {
  const { rows } = await t.db.pool.query<{ partition: number; seq: string; key: string }>(
    `SELECT m.partition_id AS partition, m.enqueue_seq::text AS seq, m.routing_key AS key
     FROM ${q('message')} m JOIN ${q('topic')} t ON t.id = m.topic_id WHERE t.topic_name = $1 ORDER BY m.partition_id, m.enqueue_seq`,
    [topic],
  )
  return rows.map((r) => ({ partition: r.partition, seq: Number(r.seq), key: r.key }))
}

const keysOf = (rows: Row[], partition: number) => rows.filter((r) => r.partition === partition).map((r) => r.key)

/** Every partition's seqs are 1..n, each key once. */
function expectContiguous(rows: Row[]): void {
  const byPartition = new Map<number, number[]>()
  for (const r of rows) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.seq])
  for (const seqs of byPartition.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
  expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length)
}

async function stagedCount(): Promise<number> {
  const { rows } = await t.db.pool.query<{ n: number }>(
    `SELECT ((SELECT count(*) FROM ${q('outbox_message')}) + (SELECT count(*) FROM ${q('outbox_tx')}))::int AS n`,
  )
  return rows[0].n
}

/** One numbering step; a step refused a lock while holding others (55P03, retriable: the drivers retry) goes again. */
async function step(maxTransactions?: number): Promise<number> {
  for (;;) {
    try {
      return await numberOutbox(t.db.pool, tables, maxTransactions)
    } catch (e) {
      if ((e as { code?: string }).code !== '55P03') throw e
    }
  }
}

/** Runs numbering steps until nothing committed is left (other drivers may run at the same time). */
async function numberAll(): Promise<void> {
  while ((await step()) > 0);
}

async function businessTable(): Promise<string> {
  const name = `${quoteIdent(t.db.schema)}.${quoteIdent(uniqueName('orders').replace('-', '_'))}`
  await t.db.pool.query(`CREATE TABLE ${name} (id text PRIMARY KEY)`)
  return name
}

/** A producer whose client never listens: numbering happens only when the test drives it. */
async function quietProducer() {
  const p = t.newKafka({ listen: false }).producer()
  await p.connect()
  return p
}

/** A producer of its own client, disconnected by the test: a client that listens numbers everything staged. */
async function ownProducer(config?: ProducerConfig) {
  const p = t.newKafka().producer(config)
  await p.connect()
  return p
}

describe('sendWith at REPEATABLE READ and SERIALIZABLE', () => {
  for (const level of LEVELS) {
    it(`${level}: commits with the business row; consumers get every message, contiguous, woken once it is numbered`, async () => {
      const topic = await t.createTopic(2, 'rr')
      const orders = await businessTable()
      const producer = await ownProducer()
      const plain = await ownProducer()
      const received: Array<{ partition: number; offset: string; key: string }> = []
      let onMessage = () => {}
      const consumer = await t.newKafka().consumer({ groupId: uniqueName('g'), maxWaitTimeInMs: 30_000 })
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ partition, message }) => {
          received.push({ partition, offset: message.offset, key: String(message.key) })
          onMessage()
        },
      })
      const receivedAll = (n: number) =>
        new Promise<void>((resolve) => {
          onMessage = () => received.length >= n && resolve()
          onMessage()
        })
      const listener = await t.db.connect()
      const notes: string[] = []
      listener.on('notification', (n) => notes.push(n.payload ?? ''))
      await listener.query(`LISTEN ${quoteIdent(tables.notifyChannel)}`)
      try {
        const client = await t.db.connect()
        await client.query(`BEGIN ISOLATION LEVEL ${level}`)
        await client.query(`INSERT INTO ${orders} VALUES ('o1')`)
        const sent = await producer.sendBatchWith(client, {
          topicMessages: [
            {
              topic,
              messages: [
                { key: 'a0', value: 'x', partition: 0 },
                { key: 'a1', value: 'x', partition: 1 },
                { key: 'a2', value: 'x', partition: 0 },
              ],
            },
          ],
        })
        expect(sent.map((r) => r.baseOffset)).toEqual(['-1', '-1'])
        // other producers move both partitions' sequences while the caller's snapshot is open
        await plain.send({ topic, messages: [{ key: 'p0', value: 'x', partition: 0 }] })
        await plain.send({ topic, messages: [{ key: 'p1', value: 'x', partition: 1 }] })
        await producer.sendWith(client, { topic, messages: [{ key: 'a3', value: 'x', partition: 1 }] })
        await receivedAll(2)
        await client.query('COMMIT')
        await receivedAll(6)
        expect((await t.db.pool.query(`SELECT id FROM ${orders}`)).rows).toEqual([{ id: 'o1' }])
        const rows = await log(topic)
        expectContiguous(rows)
        // numbered after the COMMIT, so after the plain sends that committed while the caller's transaction was open
        expect(keysOf(rows, 0)).toEqual(['p0', 'a0', 'a2'])
        expect(keysOf(rows, 1)).toEqual(['p1', 'a1', 'a3'])
        const byPartition = (p: number) => received.filter((r) => r.partition === p).map((r) => `${r.offset}:${r.key}`)
        expect(byPartition(0)).toEqual(['0:p0', '1:a0', '2:a2'])
        expect(byPartition(1)).toEqual(['0:p1', '1:a1', '2:a3'])
        expect(await stagedCount()).toBe(0)
        // the COMMIT asked for numbering (o:<topic id>), then the numbering step woke the topic's listeners
        const { rows: ids } = await t.db.pool.query<{ id: string }>(`SELECT id::text AS id FROM ${q('topic')} WHERE topic_name = $1`, [topic])
        const id = ids[0].id
        await new Promise<void>((resolve) => {
          const check = () => (notes.lastIndexOf(id) > notes.indexOf(`o:${id}`) && notes.includes(`o:${id}`) ? resolve() : undefined)
          listener.on('notification', check)
          check()
        })
      } finally {
        await Promise.all([consumer.disconnect(), producer.disconnect(), plain.disconnect()])
      }
    })
  }

  it("without LISTEN anywhere, an idle consumer's polls number staged messages; a maintenance run does too", async () => {
    const topic = await t.createTopic(1, 'polling')
    const producer = await quietProducer()
    const client = await t.db.connect()
    const stage = async (key: string) => {
      await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
      await producer.sendWith(client, { topic, messages: [{ key, value: 'x' }] })
      await client.query('COMMIT')
    }
    await stage('by-maintenance')
    const maintenance = { enabled: false, cronEnabled: false, intervalSeconds: 3600, batchDeleteLimit: 100, registrationExpirySeconds: 86_400 }
    const report = await runMaintenance({ pool: t.db.pool, tables, maintenance }, { vacuum: false })
    expect(report).toMatchObject({ skipped: false, outboxNumbered: 1 })
    await stage('by-poll')
    const consumer = await t.newKafka({ listen: false }).consumer({ groupId: uniqueName('g') })
    await consumer.connect()
    const keys: string[] = []
    let all = () => {}
    const received = new Promise<void>((resolve) => (all = () => keys.length === 2 && resolve()))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        keys.push(`${message.offset}:${String(message.key)}`)
        all()
      },
    })
    try {
      await received
      expect(keys).toEqual(['0:by-maintenance', '1:by-poll'])
    } finally {
      await Promise.all([consumer.disconnect(), producer.disconnect()])
    }
  })

  it('a rollback leaves nothing; a rolled-back savepoint takes only its own messages', async () => {
    const topic = await t.createTopic(1, 'rollback')
    const producer = await quietProducer()
    const client = await t.db.connect()
    try {
      await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
      await producer.sendWith(client, { topic, messages: [{ key: 'gone', value: 'x' }] })
      await client.query('ROLLBACK')
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      await producer.sendWith(client, { topic, messages: [{ key: 'kept1', value: 'x' }] })
      await client.query('SAVEPOINT s')
      await producer.sendWith(client, { topic, messages: [{ key: 'undone', value: 'x' }] })
      await client.query('ROLLBACK TO SAVEPOINT s')
      await producer.sendWith(client, { topic, messages: [{ key: 'kept2', value: 'x' }] })
      await client.query('COMMIT')
      // a transaction whose only send was in a rolled-back savepoint
      await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
      await client.query('SAVEPOINT s')
      await producer.sendWith(client, { topic, messages: [{ key: 'undone2', value: 'x' }] })
      await client.query('ROLLBACK TO SAVEPOINT s')
      await client.query('COMMIT')
      await numberAll()
      expect(await log(topic)).toEqual([
        { partition: 0, seq: 1, key: 'kept1' },
        { partition: 0, seq: 2, key: 'kept2' },
      ])
      expect(await stagedCount()).toBe(0)
    } finally {
      await producer.disconnect()
    }
  })

  // analyzed: the staging tables' statistics say they are tiny (as autovacuum leaves them between bursts), so a
  // statement of ours inside the caller's transaction that looked a row up would be planned as a scan of the whole table
  for (const stats of ['fresh', 'analyzed'] as const)
    it(`many SERIALIZABLE outbox transactions in parallel beside plain sends (${stats} statistics): no serialization failure, each message once, commit order`, async () => {
      if (stats === 'analyzed') await t.db.pool.query(`ANALYZE ${q('outbox_tx')}, ${q('outbox_message')}`)
      const topic = await t.createTopic(3, `parallel-${stats}`)
      const orders = await businessTable()
      const producer = await ownProducer()
      const plain = await ownProducer()
      interface Tx {
        keys: Map<number, string[]>
        commitStart: number
        commitEnd: number
      }
      const done: Tx[] = []
      const errors: unknown[] = []
      const WORKERS = 10
      const ROUNDS = 8
      const clients: pg.Client[] = []
      for (let w = 0; w < WORKERS; w++) clients.push(await t.db.connect())
      let plainRunning = true
      const plainSends = (async () => {
        for (let i = 0; plainRunning; i++) await plain.send({ topic, messages: [{ key: `plain-${i}`, value: 'x', partition: i % 3 }] })
      })()
      await Promise.all(
        clients.map(async (client, w) => {
          for (let r = 0; r < ROUNDS; r++) {
            const keys = new Map<number, string[]>()
            try {
              await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
              await client.query(`INSERT INTO ${orders} VALUES ($1)`, [`w${w}r${r}`])
              for (let s = 0; s < 1 + ((w + r) % 3); s++) {
                const partition = (w * 7 + r * 3 + s) % 3
                const key = `w${w}r${r}s${s}`
                keys.set(partition, [...(keys.get(partition) ?? []), key])
                await producer.sendWith(client, { topic, messages: [{ key, value: 'x', partition }] })
              }
              const commitStart = performance.now()
              await client.query('COMMIT')
              done.push({ keys, commitStart, commitEnd: performance.now() })
            } catch (e) {
              errors.push(e)
              await client.query('ROLLBACK').catch(() => undefined)
            }
          }
        }),
      )
      plainRunning = false
      await plainSends
      await Promise.all([producer.disconnect(), plain.disconnect()])
      expect(errors.map((e) => `${(e as { code?: string }).code}: ${(e as Error).message}`)).toEqual([])
      await numberAll()
      expect(await stagedCount()).toBe(0)
      const rows = await log(topic)
      expectContiguous(rows)
      const seqOf = new Map(rows.map((r) => [r.key, r.seq]))
      const expected = done.flatMap((tx) => [...tx.keys.values()].flat())
      expect(expected.filter((k) => !seqOf.has(k))).toEqual([])
      expect(done.length).toBe(WORKERS * ROUNDS)
      expect(rows.filter((r) => r.key.startsWith('w')).length).toBe(expected.length)
      for (const tx of done) {
        for (const [partition, keys] of tx.keys) {
          const seqs = keys.map((k) => seqOf.get(k)!)
          // a transaction's messages of one partition: consecutive, in send order
          expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i))
          expect(rows.find((r) => r.seq === seqs[0] && r.partition === partition)?.key).toBe(keys[0])
        }
      }
      // commit order: a transaction whose COMMIT returned before another's began comes first in every shared partition
      let pairs = 0
      for (const a of done) {
        for (const b of done) {
          if (a.commitEnd >= b.commitStart) continue
          for (const [partition, keys] of a.keys) {
            const other = b.keys.get(partition)
            if (!other) continue
            pairs++
            expect(seqOf.get(keys.at(-1)!)!).toBeLessThan(seqOf.get(other[0])!)
          }
        }
      }
      expect(pairs).toBeGreaterThan(0)
    })

  it('open transactions beside it (staged, READ COMMITTED outbox, producer transaction) never hold up committed ones', async () => {
    const topic = await t.createTopic(1, 'open')
    const producer = await quietProducer()
    const txProducer = await ownProducer({ transactionalId: uniqueName('tx') })
    const [rr, rc, late] = [await t.db.connect(), await t.db.connect(), await t.db.connect()]
    await rr.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    await producer.sendWith(rr, { topic, messages: [{ key: 'open-rr', value: 'x' }] })
    await rc.query('BEGIN ISOLATION LEVEL READ COMMITTED')
    await producer.sendWith(rc, { topic, messages: [{ key: 'open-rc', value: 'x' }] })
    const open = await txProducer.transaction()
    await open.send({ topic, messages: [{ key: 'open-tx', value: 'x' }] })
    await late.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
    await producer.sendWith(late, {
      topic,
      messages: [
        { key: 'late-1', value: 'x' },
        { key: 'late-2', value: 'x' },
      ],
    })
    await late.query('COMMIT')
    expect(await step()).toBe(1)
    expect(keysOf(await log(topic), 0)).toEqual(['late-1', 'late-2'])
    await producer.send({ topic, messages: [{ key: 'plain', value: 'x' }] })
    await rr.query('COMMIT')
    await numberAll()
    await rc.query('COMMIT')
    await open.commit()
    const rows = await log(topic)
    expectContiguous(rows)
    expect(keysOf(rows, 0)).toEqual(['late-1', 'late-2', 'plain', 'open-rr', 'open-rc', 'open-tx'])
    await Promise.all([producer.disconnect(), txProducer.disconnect()])
  })

  it('four drivers at once number each message once, in commit order', async () => {
    const topic = await t.createTopic(4, 'drivers')
    const producer = await quietProducer()
    const client = await t.db.connect()
    const order: string[][] = [[], [], [], []]
    for (let i = 0; i < 30; i++) {
      await client.query(`BEGIN ISOLATION LEVEL ${LEVELS[i % 2]}`)
      const messages = [0, 1].map((j) => ({ key: `t${i}m${j}`, value: 'x', partition: (i + j * 3) % 4 }))
      for (const m of messages) order[m.partition].push(m.key)
      await producer.sendWith(client, { topic, messages })
      await client.query('COMMIT')
    }
    await producer.disconnect()
    await Promise.all(
      [0, 1, 2, 3].map(async () => {
        while ((await step(3)) > 0);
      }),
    )
    const rows = await log(topic)
    expectContiguous(rows)
    for (let p = 0; p < 4; p++) expect(keysOf(rows, p)).toEqual(order[p])
    expect(await stagedCount()).toBe(0)
  })

  it('a driver SIGKILLed after numbering steps and inside one: nothing lost, nothing numbered twice', async () => {
    const topic = await t.createTopic(2, 'sigkill')
    const producer = await quietProducer()
    const client = await t.db.connect()
    const order: string[][] = [[], []]
    for (let i = 0; i < 10; i++) {
      await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
      const messages = [0, 1, 2].map((j) => ({ key: `t${i}m${j}`, value: 'x', partition: (i + j) % 2 }))
      for (const m of messages) order[m.partition].push(m.key)
      await producer.sendWith(client, { topic, messages })
      await client.query('COMMIT')
    }
    await producer.disconnect()
    const child = spawnFixture('outboxNumberer.ts', { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, HOLD_AT: '4' })
    await child.waitForLine((l) => l === 'committed 3')
    expect(await child.waitForLine((l) => l.startsWith('holding'))).toBe('holding 1')
    child.proc.kill('SIGKILL')
    await child.exited
    // three transactions were numbered; the fourth step's work died with its connection
    expect((await log(topic)).length).toBe(9)
    await numberAll()
    const rows = await log(topic)
    expectContiguous(rows)
    expect(keysOf(rows, 0)).toEqual(order[0])
    expect(keysOf(rows, 1)).toEqual(order[1])
    expect(await stagedCount()).toBe(0)
  })
})

// Issue #16 items 1-2 (write side): DataHub's producers (advisory lock + MAX(enqueue_seq)+1, no ledger) and every
// write path of ours share one sequence: no (partition, seq) is used twice, and rows DataHub writes move the ledger,
// so watermarks and our consumers see them, also on topics and partitions only DataHub created.
import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { waitFor } from '../../helpers/db.js'
import { datahubLockKey, datahubWriter } from '../../helpers/datahubWriter.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-datahub', { pool: { max: 10 } })
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`

async function topicId(topic: string): Promise<string> {
  return (await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${q('topic')} WHERE topic_name = $1`, [topic])).rows[0].id
}

async function highWatermarks(topic: string): Promise<Record<number, string>> {
  const admin = t.kafka.admin()
  await admin.connect()
  try {
    return Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, o.high]))
  } finally {
    await admin.disconnect()
  }
}

describe('sharing the sequence with DataHub producers', () => {
  it('the advisory-lock key matches the reference test vectors, in SQL and in the test writer', async () => {
    const vectors: Array<[number, number, string]> = [
      [1, 0, '2767566679685037052'],
      [1, 1, '1636373865116826571'],
      [2, 0, '2788169034002048184'],
    ]
    await t.producer() // migrates the schema
    for (const [topic, partition, key] of vectors) {
      expect(datahubLockKey(topic, partition).toString()).toBe(key)
      const res = await t.db.pool.query<{ key: string }>(`SELECT ${q('lock_key')}($1, $2)::text AS key`, [topic, partition])
      expect(res.rows[0].key).toBe(key)
    }
  })

  it('DataHub writers interleaved with plain, batch, transactional and outbox sends: 0 duplicate seqs, 0 gaps, watermarks count every row', async () => {
    const partitions = 4
    const topic = await t.createTopic(partitions, 'shared')
    const id = await topicId(topic)
    const PER_WRITER = 120
    const plain = await t.producer()
    const idempotent = await t.producer({ idempotent: true })
    const tx = await t.producer({ transactionalId: uniqueName('shared-tx') })
    const datahub = async (w: number) => {
      const writer = datahubWriter(await t.db.connect(), t.db.schema)
      for (let i = 0; i < PER_WRITER; i++) await writer.enqueue(id, i % partitions, `dh${w}-${i}`, Buffer.from('x'))
    }
    const ours = async () => {
      for (let i = 0; i < PER_WRITER; i += 4) {
        await plain.send({ topic, messages: [{ key: `p-${i}`, value: 'v', partition: i % partitions }] })
        await idempotent.sendBatch({
          topicMessages: [{ topic, messages: [3, 1].map((p) => ({ key: `i-${i}-${p}`, value: 'v', partition: p })) }],
        })
        const open = await tx.transaction()
        await open.send({ topic, messages: [2, 0].map((p) => ({ key: `t-${i}-${p}`, value: 'v', partition: p })) })
        await open.commit()
      }
    }
    const outbox = async () => {
      const client: pg.Client = await t.db.connect()
      for (let i = 0; i < PER_WRITER; i += 2) {
        await client.query('BEGIN')
        await plain.sendWith(client, { topic, messages: [1, 0, 3].map((p) => ({ key: `o-${i}-${p}`, value: 'v', partition: p })) })
        await client.query('COMMIT')
      }
    }
    await Promise.all([datahub(1), datahub(2), datahub(3), ours(), outbox()])

    const { rows } = await t.db.pool.query<{ partition: number; seqs: string[]; dups: number; n: number }>(
      `SELECT partition_id AS partition, array_agg(enqueue_seq::text ORDER BY enqueue_seq) AS seqs,
              (count(*) - count(DISTINCT enqueue_seq))::int AS dups, count(*)::int AS n
       FROM ${q('message')} WHERE topic_id = $1 GROUP BY 1 ORDER BY 1`,
      [id],
    )
    const total = rows.reduce((a, r) => a + r.n, 0)
    console.log(`shared: ${total} rows, duplicates per partition ${rows.map((r) => r.dups).join('/')}`)
    expect(total).toBe(3 * PER_WRITER + (PER_WRITER / 4) * 5 + (PER_WRITER / 2) * 3)
    for (const r of rows) {
      expect(r.dups).toBe(0)
      expect(r.seqs.map(Number)).toEqual(r.seqs.map((_, i) => i + 1))
    }
    const high = await highWatermarks(topic)
    for (const r of rows) expect(high[r.partition]).toBe(String(r.n))
  }, 60_000)

  it('a topic only DataHub created and wrote, then grew: ledger seeded in its transaction, every row delivered, watermarks right', async () => {
    const topic = uniqueName('dh-only')
    const writer = datahubWriter(await t.db.connect(), t.db.schema)
    const id = await writer.ensureTopic(topic, 2)
    for (let i = 0; i < 60; i++) await writer.enqueue(id, i % 2, `k${i}`, Buffer.from(`dh-${i}`))
    // DataHub raises the count by upserting the topic row; its rows then land in the new partitions
    await writer.ensureTopic(topic, 4)
    for (let i = 60; i < 100; i++) await writer.enqueue(id, i % 4, `k${i}`, Buffer.from(`dh-${i}`))
    const ledger = await t.db.pool.query<{ partition: number; next: string }>(
      `SELECT partition_id AS partition, next_seq::text AS next FROM ${q('partition_seq')} WHERE topic_id = $1 ORDER BY 1`,
      [id],
    )
    expect(ledger.rows).toEqual([
      { partition: 0, next: '41' },
      { partition: 1, next: '41' },
      { partition: 2, next: '11' },
      { partition: 3, next: '11' },
    ])
    expect(await highWatermarks(topic)).toEqual({ 0: '40', 1: '40', 2: '10', 3: '10' })
    // and our next write lands above DataHub's rows
    const [meta] = await (await t.producer()).send({ topic, messages: [{ value: 'ours', partition: 2 }] })
    expect(meta.baseOffset).toBe('10')

    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Set<string>()
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) })
    await waitFor(() => seen.size >= 101)
    expect(seen.size).toBe(101)
  }, 60_000)

  it('a DataHub writer holding the partition lock in an open transaction is waited for, not raced', async () => {
    const topic = await t.createTopic(1, 'dh-open')
    const id = await topicId(topic)
    const holder = await t.db.connect()
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, 0).toString()])
    await holder.query(
      `INSERT INTO ${q('message')} (topic_id, partition_id, routing_key, enqueue_seq, payload)
       SELECT $1, 0, 'dh', COALESCE(MAX(enqueue_seq), 0) + 1, '\\x00' FROM ${q('message')} WHERE topic_id = $1 AND partition_id = 0`,
      [id],
    )
    const producer = await t.producer()
    const sent = producer.send({ topic, messages: [{ value: 'ours', partition: 0 }] })
    await waitFor(async () => {
      const res = await t.db.pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)
      return (res.rowCount ?? 0) > 0
    })
    await holder.query('COMMIT')
    const [meta] = await sent
    expect(meta.baseOffset).toBe('1') // DataHub's row took offset 0
  })
})

describe('commit-time numbering waiting for a partition while holding another', () => {
  /** An outbox transaction over partitions 0 and 1 of `topic`, its COMMIT waiting for a lock (deadlock_timeout 100 ms). */
  async function committingOutbox(topic: string): Promise<{ commit: Promise<{ code?: string } | null> }> {
    const producer = await t.producer()
    const client: pg.Client = await t.db.connect()
    await client.query(`SET deadlock_timeout = '100ms'`)
    await client.query('BEGIN')
    await producer.sendWith(client, { topic, messages: [0, 1].map((p) => ({ key: `o-${p}`, value: 'v', partition: p })) })
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid
    const commit = client.query('COMMIT').then(
      () => null,
      (e: unknown) => e as { code?: string },
    )
    await waitFor(async () => {
      const res = await t.db.pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = $1`, [pid])
      return (res.rowCount ?? 0) > 0
    })
    return { commit } // wrapped: an async function would otherwise wait for the COMMIT itself
  }

  async function rows(topic: string): Promise<number> {
    const res = await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${q('message')} WHERE topic_id = $1`, [await topicId(topic)])
    return res.rows[0].n
  }

  it('a holder slower than half of deadlock_timeout that waits for nobody is waited for: COMMIT succeeds', async () => {
    const topic = await t.createTopic(2, 'dh-slow')
    const holder = await t.db.connect()
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(await topicId(topic), 1).toString()])
    const { commit } = await committingOutbox(topic)
    // the fault: a holder stalled for ten of the waiter's 50 ms slices (the old bound gave up after one)
    await new Promise((r) => setTimeout(r, 500))
    await holder.query('COMMIT')
    expect(await commit).toBeNull()
    expect(await rows(topic)).toBe(2)
  })

  it('a holder queued behind DDL that waits for the committing transaction is no cycle: COMMIT succeeds once the queue is reordered', async () => {
    const topic = await t.createTopic(2, 'dh-queued')
    const holder = await t.db.connect()
    await holder.query(`SET deadlock_timeout = '100ms'`)
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(await topicId(topic), 1).toString()])
    const { commit } = await committingOutbox(topic)
    // maintenance DDL waits for the committing transaction's RowExclusive lock on the message table, and the holder's
    // read (DataHub's MAX(enqueue_seq)+1) queues behind it: pg_blocking_pids names the DDL for the holder though the
    // holder's lock conflicts with nothing granted, and PostgreSQL's detector lets it go ahead of the DDL
    const ddl = await t.db.connect()
    await ddl.query(`SET deadlock_timeout = '100ms'`)
    const ddlPid = (await ddl.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid
    const locked = ddl.query('BEGIN').then(() => ddl.query(`LOCK TABLE ${q('message')} IN ACCESS EXCLUSIVE MODE`))
    await waitFor(async () => ((await t.db.pool.query(`SELECT 1 FROM pg_locks WHERE NOT granted AND pid = $1`, [ddlPid])).rowCount ?? 0) > 0)
    const read = holder.query(`SELECT max(enqueue_seq) FROM ${q('message')}`)
    // the read is granted ahead of the DDL by a deadlock check; before, the COMMIT gave up first ("lock of partition 1
    // ... not taken: its holder waits for this transaction", 55P03) and the read then waited for the DDL
    const first = await Promise.race([read.then(() => 'read'), commit.then((e) => `commit ended: ${e?.code ?? 'ok'}`)])
    if (first !== 'read') await ddl.query('COMMIT')
    expect(first).toBe('read')
    await holder.query('COMMIT')
    expect(await commit).toBeNull()
    await locked
    await ddl.query('COMMIT')
    expect(await rows(topic)).toBe(2)
  })

  it('a holder that then waits for the committing transaction (a cycle, as with enqueue_batch) makes it give up, not the holder', async () => {
    const topic = await t.createTopic(2, 'dh-cycle')
    const id = await topicId(topic)
    const holder = await t.db.connect()
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, 1).toString()])
    const { commit } = await committingOutbox(topic)
    // DataHub's enqueue_batch, messages for partition 1 then 0: it holds 1 and now asks for 0, which the COMMIT holds
    const holderWaits = holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, 0).toString()])
    const failure = await commit
    expect(failure?.code).toBe('55P03')
    await holderWaits // the holder was not made a deadlock victim
    await holder.query('COMMIT')
    expect(await rows(topic)).toBe(0)
  })
})

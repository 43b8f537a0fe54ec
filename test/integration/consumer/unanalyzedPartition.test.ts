// A consumer reading a time partition that no ANALYZE has seen yet (a new hour's partition filling faster than
// autovacuum visits it) reads through the dequeue index, as it does once statistics exist. Without statistics the
// planner once preferred the unique (topic, partition, seq, enqueued_at) key for the fetch's time-bounded probes and
// read every row of the partition once per priority at each fetch: a 600,000-row partition drained at 1,400 msg/s.
// What shows it here: the index tuples the message partitions' unique keys gave out while a group drained them.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { waitFor } from '../../helpers/db.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('unanalyzed_partition')
// The planner's choice follows the partition's size on disk: with ~200-byte messages it flipped between 300,000 and
// 400,000 rows, with 1.7 kB ones (kept inline, uncompressed: under the 2 kB TOAST threshold) between 50,000 and
// 100,000 (PostgreSQL 15, default costs)
const STORED = 100_000
const READ = 20_000
const VALUE = Buffer.alloc(1700, 'v')
const parent = () => `${quoteIdent(t.db.schema)}.${quoteIdent('metadata_queue_message')}`

/** Index tuples read so far from the message partitions' unique keys and their dequeue indexes. */
async function indexReads(): Promise<{ uniqueKey: number; dequeue: number }> {
  const client = await t.db.pool.connect()
  try {
    await client.query('SELECT pg_stat_clear_snapshot()')
    const { rows } = await client.query<{ uniqueKey: string; dequeue: string }>(
      `SELECT COALESCE(sum(s.idx_tup_read) FILTER (WHERE d LIKE '%(topic_id, partition_id, enqueue_seq, enqueued_at)'), 0) AS "uniqueKey",
              COALESCE(sum(s.idx_tup_read) FILTER (WHERE d LIKE '%(topic_id, partition_id, priority, enqueue_seq)'), 0) AS dequeue
       FROM pg_inherits i JOIN pg_stat_user_indexes s ON s.relid = i.inhrelid,
            LATERAL pg_get_indexdef(s.indexrelid) AS d
       WHERE i.inhparent = $1::regclass`,
      [parent()],
    )
    return { uniqueKey: Number(rows[0]!.uniqueKey), dequeue: Number(rows[0]!.dequeue) }
  } finally {
    client.release()
  }
}

let topic: string

beforeAll(async () => {
  topic = await t.createTopic(1)
  // keep autovacuum from analyzing the partitions while the test runs (a new hour's partition before its first visit)
  const { rows } = await t.db.pool.query<{ child: string }>(
    `SELECT inhrelid::regclass::text AS child FROM pg_inherits WHERE inhparent = $1::regclass`,
    [parent()],
  )
  for (const { child } of rows) await t.db.pool.query(`ALTER TABLE ${child} SET (autovacuum_enabled = false)`)
})

afterAll(async () => {
  const { rows } = await t.db.pool.query<{ child: string }>(
    `SELECT inhrelid::regclass::text AS child FROM pg_inherits WHERE inhparent = $1::regclass`,
    [parent()],
  )
  for (const { child } of rows) await t.db.pool.query(`ALTER TABLE ${child} RESET (autovacuum_enabled)`).catch(() => undefined)
})

it('reads a partition without statistics through the dequeue index', async () => {
  const producer = await t.producer()
  const consumer = t.kafka.consumer({ groupId: `g-${topic}` })
  await consumer.connect()
  let seen = 0
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachBatch: async ({ batch }) => {
      seen += batch.messages.length
    },
  })
  // a member keeping up: its fetches drained the partition, so it reads in a bounded time range from then on
  for (const n of [1, 2]) {
    await producer.send({ topic, messages: [{ value: 'warm-up' }] })
    await waitFor(() => seen >= n, { timeout: 60_000, what: `warm-up message ${n}` })
  }
  // then a burst it is not there for fills the partition before any ANALYZE
  consumer.pause([{ topic }])
  for (let i = 0; i < STORED; i += 2000) await producer.send({ topic, messages: Array.from({ length: 2000 }, () => ({ value: VALUE })) })
  const { rows } = await t.db.pool.query<{ reltuples: number }>(
    `SELECT c.reltuples FROM pg_class c WHERE c.oid = (SELECT m.tableoid FROM ${parent()} m ORDER BY m.enqueue_seq DESC LIMIT 1)`,
  )
  expect(rows[0]!.reltuples, 'the partition holding the messages has no statistics yet').toBeLessThan(0)
  const before = await indexReads()
  consumer.resume([{ topic }])
  await waitFor(() => seen >= READ, { timeout: 120_000, what: `${READ} messages` })
  // a backend reports its statistics when idle, at most once a second, and when it exits
  await consumer.disconnect()

  // every plan reads each delivered row from one index or the other: wait until the reports cover them
  const after = await waitFor(
    async () => {
      const now = await indexReads()
      return now.uniqueKey - before.uniqueKey + now.dequeue - before.dequeue >= READ ? now : undefined
    },
    { timeout: 30_000, what: 'index statistics for the read' },
  )
  expect(after.dequeue - before.dequeue).toBeGreaterThanOrEqual(READ)
  // the start-position and log-start probes read a few; a whole-partition scan per priority and fetch reads millions
  expect(after.uniqueKey - before.uniqueKey).toBeLessThan(READ / 10)
}, 300_000)

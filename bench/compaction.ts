// Log compaction at scale (issue #37): fills a compacted topic with --rows records over --keys keys in its own
// schema, measures a producer's send latency without compaction, then runs one maintenance run (which compacts)
// while the same producer keeps sending, and reports rows compacted per second, table size and dead tuples before,
// after and after VACUUM, and the producer's p50/p99 during compaction against without it. Not part of
// `npm run bench` (a minute or more of set-up).
//   npx tsx bench/compaction.ts [--rows 1000000] [--keys 10000] [--partitions 1] [--batch 5000] [--baseline 2000] [--keep]
import { parseArgs } from 'node:util'
import pg from 'pg'
import { resolveConfig } from '../src/config/resolve.js'
import { quoteIdent } from '../src/db/identifiers.js'
import { tablesFor } from '../src/db/tables.js'
import { Kafka } from '../src/kafka.js'
import { logLevel } from '../src/kafkajs/exports.js'
import { runMaintenance } from '../src/maintenance/run.js'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    keys: { type: 'string', default: '10000' },
    partitions: { type: 'string', default: '1' },
    batch: { type: 'string', default: '5000' },
    baseline: { type: 'string', default: '2000' },
    keep: { type: 'boolean', default: false },
  },
})
const rows = Number(values.rows)
const keys = Number(values.keys)
const partitions = Number(values.partitions)
const batch = Number(values.batch)
const baselineSends = Number(values.baseline)
const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `bench_compaction_${Date.now()}`
const t = tablesFor(schema, 'metadata_queue')
const TOPIC = 'state'

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

interface Snapshot {
  rows: number
  bytes: number
  deadTuples: number
}

async function snapshot(pool: pg.Pool, topicId: string): Promise<Snapshot> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_stat_clear_snapshot()')
    const r = (
      await client.query<{ rows: string; bytes: string; dead: string }>(
        `SELECT (SELECT count(*) FROM ${t.message} WHERE topic_id = $1) AS rows,
                (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = $2::regclass) AS bytes,
                (SELECT COALESCE(sum(s.n_dead_tup), 0) FROM pg_stat_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid
                  WHERE i.inhparent = $2::regclass) AS dead`,
        [topicId, t.message],
      )
    ).rows[0]!
    return { rows: Number(r.rows), bytes: Number(r.bytes), deadTuples: Number(r.dead) }
  } finally {
    client.release()
  }
}

/** Statistics reach pg_stat_user_tables when the writing backend flushes them (about once a second): poll. */
async function settled(pool: pg.Pool, topicId: string, done: (s: Snapshot) => boolean): Promise<Snapshot> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const s = await snapshot(pool, topicId)
    if (done(s) || Date.now() > deadline) return s
    await new Promise((r) => setTimeout(r, 250))
  }
}

async function main() {
  const kafka = new Kafka({ clientId: 'bench-compaction', logLevel: logLevel.NOTHING, pgqueue: { connectionString, schema, enabled: true } })
  const admin = kafka.admin()
  await admin.connect() // migrates the schema
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: partitions, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
  })
  await admin.disconnect()
  const pool = new pg.Pool({ connectionString, max: 3 })
  const producer = kafka.producer()
  await producer.connect()
  try {
    const [{ id }] = (await pool.query<{ id: string }>(`SELECT id::text FROM ${t.topic} WHERE topic_name = $1`, [TOPIC])).rows
    let start = process.hrtime.bigint()
    // keys cycle k0..k(keys-1), round robin over the partitions, 100-byte values; in chunks so no transaction is huge.
    // Flag 4 (seq from the ledger) skips the per-row ledger trigger; the ledger is set once below.
    const chunk = 250_000
    for (let from = 0; from < rows; from += chunk) {
      const n = Math.min(chunk, rows - from)
      await pool.query(
        `INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, payload, kafka_flags)
         SELECT $1, g.i % $3, 'k' || (g.i % $4), g.i / $3 + 1, decode(repeat('78', 100), 'hex'), 4
         FROM generate_series($2::int8, $2::int8 + $5 - 1) AS g(i)`,
        [id, from, partitions, keys, n],
      )
    }
    await pool.query(
      `UPDATE ${t.partitionSeq} SET next_seq = (SELECT max(enqueue_seq) + 1 FROM ${t.message} m
                      WHERE m.topic_id = $1 AND m.partition_id = ${t.partitionSeq}.partition_id) WHERE topic_id = $1`,
      [id],
    )
    await pool.query(`VACUUM ANALYZE ${t.message}`)
    const before = await snapshot(pool, id)
    console.log(
      `filled ${before.rows} rows over ${keys} keys, ${partitions} partition(s) in ${(ms(start) / 1000).toFixed(1)} s: ${mib(before.bytes)}`,
    )

    // the producer: one keyed record per send, back to back, as a live service updating its state
    let sent = 0
    const send = async (): Promise<number> => {
      const s = process.hrtime.bigint()
      await producer.send({ topic: TOPIC, messages: [{ key: `k${sent++ % keys}`, value: 'x'.repeat(100) }] })
      return ms(s)
    }
    const baseline: number[] = []
    for (let i = 0; i < baselineSends; i++) baseline.push(await send())

    const { maintenance } = resolveConfig({ connectionString, schema })
    const during: number[] = []
    let compacting = true
    const sender = (async () => {
      while (compacting) during.push(await send())
    })()
    start = process.hrtime.bigint()
    const report = await runMaintenance(
      { pool, tables: t, maintenance: { ...maintenance, batchDeleteLimit: batch } },
      { vacuum: false, maxBatchesPerStep: Math.ceil((rows * 3) / batch / partitions) + 10 },
    )
    const compactMs = ms(start)
    compacting = false
    await sender
    if (report.skipped) throw new Error('maintenance skipped')
    if (report.errors.length) throw new Error(JSON.stringify(report.errors))
    const { deleted, scanned } = report.compaction
    const after = await settled(pool, id, (x) => x.deadTuples >= deleted)
    start = process.hrtime.bigint()
    await pool.query(`VACUUM ${t.message}`)
    const vacuumMs = ms(start)
    const vacuumed = await settled(pool, id, (x) => x.deadTuples < after.deadTuples)
    // the head: what the producer sent during and after the pass; at most one live row per key below it
    const result = {
      rows,
      keys,
      partitions,
      batch,
      compaction: {
        ms: Math.round(compactMs),
        scanned,
        deleted,
        rowsPerSecond: Math.round(deleted / (compactMs / 1000)),
        truncated: report.truncated,
      },
      before,
      after,
      afterVacuum: { ...vacuumed, vacuumMs: Math.round(vacuumMs) },
      sendLatencyMs: {
        without: { sends: baseline.length, p50: pct(baseline, 0.5), p99: pct(baseline, 0.99), max: Math.max(...baseline) },
        during: { sends: during.length, p50: pct(during, 0.5), p99: pct(during, 0.99), max: Math.max(...during) },
      },
    }
    console.log(JSON.stringify(result, null, 2))
    const headRows = during.length + 1
    console.log(
      `compacted ${deleted} of ${before.rows} rows in ${(compactMs / 1000).toFixed(1)} s (${result.compaction.rowsPerSecond} rows/s); ` +
        `left ${after.rows} rows (≤ ${keys} keys + ${headRows} head sends: ${after.rows <= keys + headRows ? 'yes' : 'NO'}); ` +
        `size ${mib(before.bytes)} -> ${mib(after.bytes)} (${after.deadTuples} dead tuples) -> ${mib(vacuumed.bytes)} after VACUUM ` +
        `(${vacuumed.deadTuples} dead); send p99 ${pct(baseline, 0.99).toFixed(2)} ms without, ${pct(during, 0.99).toFixed(2)} ms during`,
    )
  } finally {
    await producer.disconnect()
    if (!values.keep) await pool.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`)
    await pool.end()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})

// Cost of the cap and age policies on one large topic (issue #25 item 5): fills a topic with --rows rows in its
// own schema, then times retention batches of --batch rows (row cap, byte cap, age) and, for comparison, the
// whole-topic count that every batch of the old row cap ran. Not part of `npm run bench` (minutes of set-up).
//   npx tsx bench/retention-caps.ts --rows 10000000 [--partitions 2] [--batch 5000] [--batches 20] [--keep]
import { parseArgs } from 'node:util'
import pg from 'pg'
import { resolveConfig } from '../src/config/resolve.js'
import { quoteIdent } from '../src/db/identifiers.js'
import { tablesFor } from '../src/db/tables.js'
import { Kafka } from '../src/kafka.js'
import { logLevel } from '../src/kafkajs/exports.js'
import { FIRST_BATCH, retentionBatch, type RetentionPolicy } from '../src/store/retention.js'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    partitions: { type: 'string', default: '2' },
    batch: { type: 'string', default: '5000' },
    batches: { type: 'string', default: '20' },
    keep: { type: 'boolean', default: false },
  },
})
const rows = Number(values.rows)
const partitions = Number(values.partitions)
const batch = Number(values.batch)
const batches = Number(values.batches)
const connectionString = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `bench_caps_${Date.now()}`
const t = tablesFor(schema, 'metadata_queue')

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const kafka = new Kafka({ clientId: 'bench-caps', logLevel: logLevel.NOTHING, pgqueue: { connectionString, schema, enabled: true } })
  const admin = kafka.admin()
  await admin.connect() // migrates the schema
  await admin.createTopics({ topics: [{ topic: 'big', numPartitions: partitions }] })
  await admin.disconnect()
  const pool = new pg.Pool({ connectionString, max: 2 })
  try {
    const [{ id }] = (await pool.query(`SELECT id::text FROM ${t.topic} WHERE topic_name = 'big'`)).rows
    await pool.query(`SELECT ${quoteIdent(schema)}.metadata_queue_ensure_partitions(now() - interval '20 hours')`)
    let start = process.hrtime.bigint()
    // one day of rows, round robin over the partitions, 100-byte payloads; in chunks so no transaction is huge
    const chunk = 1_000_000
    for (let from = 0; from < rows; from += chunk) {
      const n = Math.min(chunk, rows - from)
      await pool.query(
        `INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, payload, enqueued_at)
         SELECT $1, g.i % $3, 'k', g.i / $3 + 1, decode(repeat('78', 100), 'hex'),
                now() - interval '20 hours' + g.i * (interval '20 hours' / $4)
         FROM generate_series($2::int8, $2::int8 + $5 - 1) AS g(i)`,
        [id, from, partitions, rows, n],
      )
    }
    await pool.query(
      `UPDATE ${t.partitionSeq} SET next_seq = (SELECT max(enqueue_seq) + 1 FROM ${t.message} m
                      WHERE m.topic_id = $1 AND m.partition_id = ${t.partitionSeq}.partition_id) WHERE topic_id = $1`,
      [id],
    )
    await pool.query(`VACUUM ANALYZE ${t.message}`)
    const fill = ms(start)
    const size = (
      await pool.query(`SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS s FROM pg_inherits WHERE inhparent = $1::regclass`, [
        t.message,
      ])
    ).rows[0].s
    console.log(`filled ${rows} rows over ${partitions} partitions in ${(fill / 1000).toFixed(1)} s (${size})`)

    start = process.hrtime.bigint()
    await pool.query(`SELECT count(*) FROM ${t.message} WHERE topic_id = $1`, [id])
    console.log(`old row cap, per batch: the whole-topic count(*) alone takes ${ms(start).toFixed(0)} ms`)
    start = process.hrtime.bigint()
    await pool.query(`SELECT sum(payload_bytes) FROM ${t.message} WHERE topic_id = $1`, [id])
    console.log(`old byte cap, per batch: the whole-topic sum alone takes ${ms(start).toFixed(0)} ms (plus a window over every row)`)

    const { maintenance } = resolveConfig({ connectionString, schema })
    // each policy has far more to delete than the batches measured take
    const policies: Array<[RetentionPolicy, string, unknown]> = [
      ['age', 'retention_max_age_seconds', 16 * 3600],
      ['rowCap', 'max_rows_per_topic', Math.floor(rows * 0.6)],
      ['byteCap', 'max_total_payload_bytes', Math.floor(rows * 0.4) * 100],
    ]
    for (const [policy, column, cap] of policies) {
      await pool.query(
        `UPDATE ${t.topic} SET max_rows_per_topic = 0, max_total_payload_bytes = 0, retention_max_age_seconds = 0
                        WHERE id = $1`,
        [id],
      )
      await pool.query(`UPDATE ${t.topic} SET ${quoteIdent(column)} = $2 WHERE id = $1`, [id, cap])
      let cursor = FIRST_BATCH
      const times: number[] = []
      let deleted = 0
      for (let i = 0; i < batches; i++) {
        start = process.hrtime.bigint()
        const res = await retentionBatch(pool, t, policy, id, cursor, batch, maintenance.registrationExpirySeconds)
        times.push(ms(start))
        cursor = res.cursor
        deleted += res.deleted
      }
      console.log(
        `${policy}: ${batches} batches of ${batch} deleted ${deleted} rows; first ${times[0].toFixed(0)} ms, ` +
          `median ${median(times.slice(1)).toFixed(0)} ms, max ${Math.max(...times.slice(1)).toFixed(0)} ms`,
      )
    }
  } finally {
    if (!values.keep) await pool.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`)
    await pool.end()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})

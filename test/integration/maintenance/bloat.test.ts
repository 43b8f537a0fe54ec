// "One hour of traffic compressed into a test": produce, consume and commit, run maintenance, 60 times over, on
// an aggressive-retention topic. The message table must stay bounded: deleted rows' space is reused.
import { describe, expect, it } from 'vitest'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_bloat')
const ITERATIONS = 60
const PER_ITERATION = 500
const BASELINE_AFTER = 5

describe('bloat', () => {
  it('keeps the message table bounded over 60 rounds of produce + consume + maintenance', { timeout: 240_000 }, async () => {
    const topic = await m.retentionTopic({ partitions: 2, aggressive: true })
    const producer = await m.producer()
    const groupId = uniqueName('group')
    const consumer = await m.consumer({ groupId })
    await consumer.subscribe({ topic: topic.name, fromBeginning: true })
    await consumer.run({ eachMessage: async () => {} })

    const consumed = async () => {
      const [{ n }] = await m.sql<{ n: number }>(
        `SELECT COALESCE(sum(offset_value), 0)::int AS n FROM ${m.tables.consumerOffset} WHERE consumer_group = $1 AND topic_id = $2`,
        [groupId, topic.id],
      )
      return n
    }
    const size = async () => {
      const [row] = await m.sql<{ bytes: string; rows: number }>(
        `SELECT (SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = $1::regclass)::text AS bytes,
                (SELECT count(*)::int FROM ${m.tables.message} WHERE topic_id = $2) AS rows`,
        [m.tables.message, topic.id],
      )
      return { bytes: Number(row.bytes), rows: row.rows }
    }

    const sizes: number[] = []
    let deleted = 0
    for (let i = 1; i <= ITERATIONS; i++) {
      await producer.send({
        topic: topic.name,
        messages: Array.from({ length: PER_ITERATION }, (_, j) => ({ key: `k${j % 17}`, value: `${i}:${j}:${'x'.repeat(200)}` })),
      })
      await waitFor(async () => (await consumed()) === i * PER_ITERATION, { timeout: 20_000 })
      const report = await runMaintenance(
        { pool: m.db.pool, tables: m.tables, maintenance: m.maintenance, logger: m.logger },
        { batchDeleteLimit: 200 },
      )
      if (report.skipped) throw new Error('skipped')
      expect(report.errors).toEqual([])
      deleted += report.deleted.aggressive
      sizes.push((await size()).bytes)
    }

    const baseline = sizes[BASELINE_AFTER - 1]
    const final = sizes[sizes.length - 1]
    const peak = Math.max(...sizes)
    const kib = (b: number) => `${Math.round(b / 1024)} KiB`
    console.log(
      `[bloat] ${ITERATIONS} x ${PER_ITERATION} messages: message partitions ${kib(baseline)} after round ${BASELINE_AFTER}, ` +
        `${kib(final)} after round ${ITERATIONS}, peak ${kib(peak)} (${(final / baseline).toFixed(2)}x); deleted ${deleted} rows`,
    )
    // everything but each partition's newest row (the anchor DataHub's MAX+1 producers continue from)
    expect(deleted).toBe(ITERATIONS * PER_ITERATION - 2)
    expect((await size()).rows).toBe(2)
    expect(final).toBeLessThan(3 * baseline)
    expect(peak).toBeLessThan(3 * baseline)
  })
})

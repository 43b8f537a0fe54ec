// Partition DDL never stalls traffic: beside a long-running open reader transaction (a report, pg_dump) a maintenance
// run that has a partition to drop and one to premake gives up on each after its short lock_timeout (retried next
// run) instead of queueing every producer and consumer behind its ACCESS EXCLUSIVE request.
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_ddl_stall')
const DAY = 86_400
const WINDOW_MS = 3000

describe('partition DDL beside a long reader transaction', () => {
  it('keeps produce and consume throughput within 2x of the baseline while maintenance runs', { timeout: 60_000 }, async () => {
    const expired = await m.retentionTopic({ retentionSeconds: DAY })
    await m.insertRows(expired.id, 0, 3, { ageSeconds: 5 * DAY })
    await m.insertRows(expired.id, 0, 1) // the anchor, elsewhere: the old partition is a real drop candidate
    // the newest premade partition is missing, so premake has a CREATE ... PARTITION OF to do
    const [last] = await m.sql<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass ORDER BY c.relname DESC LIMIT 1`,
      [m.tables.message],
    )
    await m.sql(`DROP TABLE "${m.tables.schema}"."${last.name}"`)

    const topic = uniqueName('traffic')
    const producer = await m.producer()
    await producer.send({ topic, messages: [{ value: 'warm-up' }] })
    let received = 0
    const consumer = await m.consumer({ maxWaitTimeInMs: 100 })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => void received++ })

    const window = async (during?: () => Promise<void>) => {
      const [sent0, got0] = [0, received]
      let sent = sent0
      const end = Date.now() + WINDOW_MS
      const side = during?.()
      while (Date.now() < end) {
        await producer.send({ topic, messages: [{ value: `m${sent}` }] })
        sent++
      }
      return { sent, received: received - got0, side }
    }

    const reader = await m.db.connect()
    await reader.query('BEGIN')
    await reader.query(`SELECT count(*) FROM ${m.tables.message}`)
    let report: Awaited<ReturnType<typeof m.run>> | undefined
    try {
      const baseline = await window()
      const during = await window(async () => {
        report = await m.run()
      })
      await during.side
      console.log(
        `[ddl-stall] sends in ${WINDOW_MS} ms: baseline ${baseline.sent}, during maintenance ${during.sent}; ` +
          `received ${baseline.received} / ${during.received}`,
      )
      expect(during.sent).toBeGreaterThan(baseline.sent / 2)
      expect(during.received).toBeGreaterThan(baseline.received / 2)
    } finally {
      await reader.query('COMMIT')
    }
    expect(report!.partitions.busy).toHaveLength(1) // tried once, left for the next run
    const [{ missing }] = await m.sql<{ missing: boolean }>('SELECT to_regclass($1) IS NULL AS missing', [`"${m.tables.schema}"."${last.name}"`])
    expect(missing).toBe(true) // premake gave up too; made by the next call
    const next = await m.run()
    expect(next.partitions.dropped).toEqual(expect.arrayContaining(report!.partitions.busy))
    expect(next.partitionsCreated).toBeGreaterThanOrEqual(1)
  })
})

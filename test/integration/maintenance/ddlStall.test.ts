// Partition DDL never stalls traffic: beside a long-running open reader transaction (a report, pg_dump) a maintenance
// run that has a partition to drop and one to premake gives up on each after its short lock_timeout (retried next
// run) instead of queueing every producer and consumer behind its ACCESS EXCLUSIVE request. Without the timeout a
// send and the consumer's fetches wait until the reader ends: the window's longest send and longest gap between
// deliveries show it. They are bounded generously (each DDL attempt may hold traffic for its 200 ms), not compared
// with a baseline's rate: on a loaded machine a rate ratio fails with no stall at all (stop 46, ratio 260/739).
import { describe, expect, it } from 'vitest'
import { bounded } from '../../helpers/db.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_ddl_stall')
const DAY = 86_400
const WINDOW_MS = 3000
/** longer than two DDL attempts' lock_timeout (200 ms each) and any pause a loaded machine makes; far below a stall */
const STALL_MS = 2500

describe('partition DDL beside a long reader transaction', () => {
  it('no send and no delivery waits behind the DDL while maintenance runs', { timeout: 60_000 }, async () => {
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
    let lastDelivery = 0
    let longestGap = 0
    const consumer = await m.consumer({ maxWaitTimeInMs: 100 })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async () => {
        const now = Date.now()
        if (lastDelivery > 0) longestGap = Math.max(longestGap, now - lastDelivery)
        lastDelivery = now
        received++
      },
    })

    // a send that waits longer than STALL_MS fails the test at once instead of hanging it until the reader ends
    const timedSend = async (value: string): Promise<number> => {
      const started = Date.now()
      await bounded('a send queued behind partition DDL', producer.send({ topic, messages: [{ value }] }), STALL_MS)
      return Date.now() - started
    }
    const window = async (during?: () => Promise<void>) => {
      const got0 = received
      let sent = 0
      let longestSend = 0
      lastDelivery = 0
      longestGap = 0
      const end = Date.now() + WINDOW_MS
      let sideRunning = during !== undefined
      const side = during?.().finally(() => void (sideRunning = false))
      // traffic goes on until the window has passed and the maintenance run (if any) has ended
      while (Date.now() < end || sideRunning) longestSend = Math.max(longestSend, await timedSend(`m${sent++}`))
      // the gap still open at the window's end counts too
      const gap = Math.max(longestGap, lastDelivery > 0 ? Date.now() - lastDelivery : WINDOW_MS)
      return { sent, received: received - got0, longestSend, longestGap: gap, side }
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
        `[ddl-stall] in ${WINDOW_MS} ms: sends ${baseline.sent} / ${during.sent} (longest ${baseline.longestSend} / ${during.longestSend} ms), ` +
          `received ${baseline.received} / ${during.received} (longest gap ${baseline.longestGap} / ${during.longestGap} ms): baseline / during maintenance`,
      )
      expect(during.received).toBeGreaterThan(0)
      expect(during.longestSend).toBeLessThan(STALL_MS)
      expect(during.longestGap).toBeLessThan(STALL_MS)
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

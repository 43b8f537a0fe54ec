// One runner at a time per schema + prefix, across pools and processes: the others skip at once, and the
// combined result is exactly what one run would do.
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runMaintenance, type MaintenanceReport } from '../../../src/maintenance/run.js'
import { waitFor } from '../../helpers/db.js'
import { spawnFixture } from '../../helpers/processes.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_concurrency')
const otherPool = new pg.Pool({ connectionString: m.db.connectionString, max: 3 })
otherPool.on('error', () => {})
afterAll(() => otherPool.end())

const runFrom = (pool: pg.Pool, batchDeleteLimit = 50) =>
  runMaintenance({ pool, tables: m.tables, maintenance: { ...m.maintenance, batchDeleteLimit } }, { vacuum: false })

async function rowCount(topicId: string): Promise<number> {
  const [{ n }] = await m.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${m.tables.message} WHERE topic_id = $1`, [topicId])
  return n
}

const rowCapDeleted = (reports: MaintenanceReport[], topic: string) =>
  reports.reduce((sum, r) => sum + (r.skipped ? 0 : (r.byTopic[topic]?.rowCap ?? 0)), 0)

describe('one runner at a time', () => {
  it('skips at once while another session holds the lock, and runs once it is released', async () => {
    const topic = await m.retentionTopic({ maxRows: 2 })
    await m.insertRows(topic.id, 0, 5)
    const holder = await m.db.connect()
    await holder.query(`SELECT pg_advisory_lock(${m.fn('maintenance_lock_key')}())`)

    const started = Date.now()
    const skipped = await runFrom(m.db.pool)
    expect(skipped.skipped).toBe(true)
    expect(Date.now() - started).toBeLessThan(2000)
    expect(await rowCount(topic.id)).toBe(5)

    await holder.query(`SELECT pg_advisory_unlock(${m.fn('maintenance_lock_key')}())`)
    const ran = await runFrom(m.db.pool)
    expect(ran.skipped).toBe(false)
    expect(await rowCount(topic.id)).toBe(2)
  })

  it('a child process runs while two pools here skip; the row cap ends exact', { timeout: 60_000 }, async () => {
    const topic = await m.retentionTopic({ maxRows: 100 })
    await m.insertRows(topic.id, 0, 5000)
    const child = spawnFixture('../integration/maintenance/runnerChild.ts', {
      PG_URL: m.db.connectionString,
      PG_SCHEMA: m.db.schema,
      BATCH: '10',
      MAX_BATCHES: '1000',
    })
    // the child's session holds the advisory lock: 490 batches of 10 take a while
    await waitFor(
      async () => {
        const [{ held }] = await m.sql<{ held: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (
                            SELECT oid FROM pg_database WHERE datname = current_database())
                          AND ((classid::int8 << 32) | objid::int8) = ${m.fn('maintenance_lock_key')}()) AS held`,
        )
        return held
      },
      { timeout: 20_000, interval: 5 },
    )

    const here = await Promise.all([runFrom(m.db.pool), runFrom(otherPool)])
    expect(here.map((r) => r.skipped)).toEqual([true, true])

    const line = await child.waitForLine((l) => l.startsWith('report ') || l.startsWith('error '), 50_000)
    expect(await child.exited).toBe(0)
    const report = JSON.parse(line.slice('report '.length)) as MaintenanceReport
    expect(report.skipped).toBe(false)
    expect(rowCapDeleted([report], topic.name)).toBe(4900)
    expect(await rowCount(topic.id)).toBe(100)
  })

  it('runs started together from two pools never conflict: no errors, and every excess row is deleted once', async () => {
    const topic = await m.retentionTopic({ maxRows: 30 })
    for (let round = 0; round < 5; round++) {
      await m.insertRows(topic.id, 0, round === 0 ? 80 : 50)
      const reports = await Promise.all([runFrom(m.db.pool, 5), runFrom(otherPool, 5), runFrom(otherPool, 5)])
      for (const r of reports) if (!r.skipped) expect(r.errors).toEqual([])
      expect(reports.filter((r) => !r.skipped).length).toBeGreaterThanOrEqual(1)
      expect(rowCapDeleted(reports, topic.name)).toBe(50)
      expect(await rowCount(topic.id)).toBe(30)
    }
  })
})

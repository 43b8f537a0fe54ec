// The in-app scheduler, its pg_cron alternative, and the SQL entry point pg_cron calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PgQueueContext } from '../../../src/client/context.js'
import { resolveConfig } from '../../../src/config/resolve.js'
import type { MaintenanceConfig } from '../../../src/config/types.js'
import { tablesFor } from '../../../src/db/tables.js'
import { cronJobName, cronSchedule, startMaintenance } from '../../../src/maintenance/scheduler.js'
import { cronCommand, cronVacuumCommand, probePgCron } from '../../../src/store/maintenanceCron.js'
import { waitFor } from '../../helpers/db.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_scheduler')
const contexts: PgQueueContext[] = []
afterAll(async () => {
  for (const ctx of contexts) await ctx.release()
})

async function context(maintenance: Partial<MaintenanceConfig>): Promise<PgQueueContext> {
  const ctx = new PgQueueContext(resolveConfig({ ...m.db.options, maintenance }), m.logger)
  contexts.push(ctx)
  await ctx.acquire()
  return ctx
}

async function rowCount(topicId: string): Promise<number> {
  const [{ n }] = await m.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${m.tables.message} WHERE topic_id = $1`, [topicId])
  return n
}

async function lockHeld(): Promise<boolean> {
  const [{ held }] = await m.sql<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
                    AND ((classid::int8 << 32) | objid::int8) = ${m.fn('maintenance_lock_key')}()) AS held`,
  )
  return held
}

describe('in-app scheduler', () => {
  it('runs every interval, and stop() cuts the run in progress short and waits for it', { timeout: 60_000 }, async () => {
    const topic = await m.retentionTopic({ maxRows: 5 })
    await m.insertRows(topic.id, 0, 20)
    const ctx = await context({ enabled: true, cronEnabled: false })
    const handle = await startMaintenance(ctx, {
      intervalMs: 100,
      firstRunDelayMs: 0,
      run: { vacuum: false, batchDeleteLimit: 2, maxBatchesPerStep: 100_000 },
    })
    expect(handle.mode).toBe('in-app')
    await waitFor(async () => (await rowCount(topic.id)) === 5, { timeout: 10_000 })

    // a later round now has ~2500 batches to do: stop it in the middle
    await m.insertRows(topic.id, 0, 5000)
    await waitFor(async () => (await lockHeld()) && (await rowCount(topic.id)) < 5000, { timeout: 10_000, interval: 5 })
    await handle.stop()

    expect(await lockHeld()).toBe(false)
    const left = await rowCount(topic.id)
    expect(left).toBeGreaterThan(5)
    // no later round: the count stays put over several intervals
    await new Promise((r) => setTimeout(r, 400))
    expect(await rowCount(topic.id)).toBe(left)
  })

  it('falls back to in-app when cronEnabled is set but pg_cron is not installed, logging why', async () => {
    const ctx = await context({ enabled: true, cronEnabled: true })
    const cron = await probePgCron(ctx.db.pool)
    m.lines.length = 0
    const handle = await startMaintenance(ctx, { firstRunDelayMs: 60_000 })
    try {
      if (cron.installed) {
        expect(handle.mode).toBe('pg_cron')
      } else {
        expect(handle.mode).toBe('in-app')
        expect(m.lines.some((l) => l.level === 'WARN' && l.message.includes('pg_cron is not installed'))).toBe(true)
      }
    } finally {
      await handle.stop()
    }
  })

  it('does nothing when maintenance is disabled', async () => {
    const ctx = await context({ enabled: false, cronEnabled: false })
    const handle = await startMaintenance(ctx)
    expect(handle.mode).toBe('off')
    await handle.stop()
  })
})

describe('pg_cron entry point', () => {
  // exactly what the pg_cron job runs
  const call = () => cronCommand(m.tables, 0, 2)
  let client: Awaited<ReturnType<typeof m.db.connect>>
  beforeAll(async () => {
    client = await m.db.connect()
  })

  it('CALL runs the same policies, committing per batch, and does nothing while another runner holds the lock', async () => {
    const capped = await m.retentionTopic({ maxRows: 3 })
    const aged = await m.retentionTopic({ retentionSeconds: 60 })
    await m.insertRows(capped.id, 0, 10)
    await m.insertRows(aged.id, 0, 4, { ageSeconds: 120 })
    await m.insertRows(aged.id, 0, 1)

    const holder = await m.db.connect()
    await holder.query(`SELECT pg_advisory_lock(${m.fn('maintenance_lock_key')}())`)
    await client.query(call())
    expect(await rowCount(capped.id)).toBe(10)
    await holder.query(`SELECT pg_advisory_unlock(${m.fn('maintenance_lock_key')}())`)

    await client.query(call())
    expect(await m.seqs(capped.id)).toEqual([8, 9, 10])
    expect(await m.seqs(aged.id)).toEqual([5])
    expect(await lockHeld()).toBe(false)
  })

  it('the companion VACUUM job command runs on its own', async () => {
    await client.query(cronVacuumCommand(m.tables))
  })
})

describe('pg_cron job settings', () => {
  it('turns the interval into a cron expression and names the job per database, schema and prefix', () => {
    expect(cronSchedule(60)).toBe('*/1 * * * *')
    expect(cronSchedule(900)).toBe('*/15 * * * *')
    expect(cronSchedule(3600)).toBe('0 */1 * * *')
    expect(cronSchedule(6 * 3600)).toBe('0 */6 * * *')
    expect(cronSchedule(2 * 86_400)).toBe('0 0 */2 * *')
    expect(cronJobName('Data-Hub', tablesFor('queue', 'metadata_queue'))).toBe('kafkajs_pgqueue_maintenance__data_hub__queue__metadata_queue')
    expect(cronJobName('d'.repeat(80), tablesFor('queue', 'metadata_queue'))).toMatch(/^kafkajs_pgqueue_maintenance__h[0-9a-f]{12}$/)
  })
})

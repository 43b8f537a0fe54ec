// 'sweep delivery attempts': the dead-letter extension's rows whose group is done with their message go, through
// both runners. Before the step, a member that died mid-retry left its failing message's row forever (hidden by
// `dead-letters retrying` once the group committed past it, never deleted), and every move's mark stayed too.
import { describe, expect, it } from 'vitest'
import { claimMove, recordAttempts } from '../../../src/store/deliveryAttempts.js'
import { cronCommand } from '../../../src/store/maintenanceCron.js'
import { commitOffsets } from '../../../src/store/offsets.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture, type MaintenanceFixture } from './helpers.js'

const RUNNERS: Record<string, (m: MaintenanceFixture) => Promise<void>> = {
  'in-app runner': async (m) => {
    const report = await m.run({ vacuum: false, batchDeleteLimit: 2 })
    expect(report.errors).toEqual([])
    expect(report.attemptsSwept).toBe(4)
  },
  'pg_cron procedure': async (m) => {
    const client = await m.db.connect()
    const warnings: string[] = []
    client.on('notice', (n) => n.severity === 'WARNING' && warnings.push(n.message ?? ''))
    await client.query(cronCommand(m.tables, 0, 2))
    await client.end()
    expect(warnings).toEqual([])
  },
}

for (const [runnerName, runOnce] of Object.entries(RUNNERS)) {
  describe(`delivery attempts swept by the ${runnerName}`, () => {
    const m = useMaintenanceFixture(`maint_attempts_${runnerName.slice(0, 6)}`)

    it('rows below the committed offset (failing or moved) and rows of a group without an offset go; the rest stay', async () => {
      const topic = await m.retentionTopic()
      await m.insertRows(topic.id, 0, 10)
      const { pool } = m.db
      const [group, gone] = [uniqueName('g'), uniqueName('gone')]
      const key = (g: string, offset: number) => ({ group: g, topic: topic.name, partition: 0, offset: String(offset) })
      // a member died while retrying offset 1; offset 3 was moved; 4 failed and was handled elsewhere, committed past
      for (const offset of [1, 4]) await recordAttempts(pool, m.tables, key(group, offset), 2, 'Error: x')
      await recordAttempts(pool, m.tables, key(group, 3), 2, 'Error: x')
      expect(await claimMove(pool, m.tables, key(group, 3), 3, 'Error: x')).toBe(true)
      // failing now, at and past the committed offset: kept
      for (const offset of [5, 7]) await recordAttempts(pool, m.tables, key(group, offset), 1, 'Error: x')
      // a group whose offsets are gone
      await recordAttempts(pool, m.tables, key(gone, 6), 1, 'Error: x')
      await commitOffsets(pool, m.tables, group, [{ topicId: topic.id, partition: 0, offset: '5' }], { lockOwner: null, exact: true })

      await runOnce(m)

      const rows = await pool.query<{ g: string; offset: string }>(
        `SELECT consumer_group AS g, (enqueue_seq - 1)::text AS offset FROM ${m.tables.deliveryAttempt} ORDER BY 1, 2`,
      )
      expect(rows.rows).toEqual([
        { g: group, offset: '5' },
        { g: group, offset: '7' },
      ])
    })
  })
}

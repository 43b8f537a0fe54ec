// The in-app runner and the pg_cron procedure run one step list (maintenance_steps()) through the same functions:
// on the same state they must leave the same tables, whatever each step found to do.
import { expect, it } from 'vitest'
import { cronCommand } from '../../../src/store/maintenanceCron.js'
import { useMaintenanceFixture, type MaintenanceFixture } from './helpers.js'

const inApp = useMaintenanceFixture('runners_in_app')
const procedure = useMaintenanceFixture('runners_procedure')
const BATCH = 3

/** The same topics, rows and members in either schema; returns role → topic id. */
async function seed(m: MaintenanceFixture): Promise<Record<string, string>> {
  const topics = {
    age: await m.retentionTopic({ retentionSeconds: 60 }),
    rows: await m.retentionTopic({ partitions: 2, maxRows: 4 }),
    bytes: await m.retentionTopic({ maxBytes: 100 }),
    aggressive: await m.retentionTopic({ aggressive: true }),
    untouched: await m.retentionTopic({}),
  }
  await m.insertRows(topics.age.id, 0, 5, { ageSeconds: 600 })
  await m.insertRows(topics.age.id, 0, 3)
  // the row cap deletes oldest first across partitions: partition 1's rows are a minute older, so the order does not
  // depend on how far apart the two inserts ran (they interleave within milliseconds otherwise)
  await m.insertRows(topics.rows.id, 0, 10)
  await m.insertRows(topics.rows.id, 1, 3, { ageSeconds: 60 })
  await m.insertRows(topics.bytes.id, 0, 10, { bytes: 30 })
  await m.insertRows(topics.aggressive.id, 0, 6)
  await m.insertRows(topics.untouched.id, 0, 4)
  // a member silent far longer than any expiry, and a live one
  await m.sql(
    `INSERT INTO ${m.tables.groupMember} (consumer_group, member_id, client_id, client_host, session_timeout_ms, heartbeat_at)
     VALUES ('g', 'silent', 'c', 'h', 1000, now() - interval '30 days'), ('g', 'live', 'c', 'h', 30000, now())`,
  )
  return Object.fromEntries(Object.entries(topics).map(([role, t]) => [role, t.id]))
}

async function state(m: MaintenanceFixture, topics: Record<string, string>) {
  const byRole: Record<string, unknown> = {}
  for (const [role, id] of Object.entries(topics)) {
    const ledger = await m.sql<{ partition: number; next: string }>(
      `SELECT partition_id AS partition, next_seq::text AS next FROM ${m.tables.partitionSeq} WHERE topic_id = $1 ORDER BY 1`,
      [id],
    )
    byRole[role] = { p0: await m.seqs(id, 0), p1: await m.seqs(id, 1), ledger }
  }
  const members = await m.sql<{ id: string }>(`SELECT member_id AS id FROM ${m.tables.groupMember} ORDER BY 1`)
  return { topics: byRole, members: members.map((r) => r.id) }
}

it('the in-app run and the pg_cron procedure leave the tables in the same state', async () => {
  const [a, b] = [await seed(inApp), await seed(procedure)]
  expect(await state(procedure, b)).toEqual(await state(inApp, a))
  const before = await state(inApp, a)

  await inApp.run({ batchDeleteLimit: BATCH }, { registrationExpirySeconds: 86_400 })
  const client = await procedure.db.connect()
  const warnings: string[] = []
  client.on('notice', (n) => n.severity === 'WARNING' && warnings.push(n.message ?? ''))
  await client.query(cronCommand(procedure.tables, 86_400, BATCH))

  expect(warnings).toEqual([])
  const after = await state(inApp, a)
  expect(await state(procedure, b)).toEqual(after)
  // every kind of step had something to do, so the comparison says something
  expect(after).not.toEqual(before)
  expect(after.members).toEqual(['live'])
  expect(after.topics).toMatchObject({
    age: { p0: [6, 7, 8] },
    untouched: { p0: [1, 2, 3, 4] },
  })
})

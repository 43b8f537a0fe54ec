// Registrations, group members and partition leases silent longer than maintenance.registrationExpirySeconds are
// removed (DataHub's never expire, so a decommissioned group blocks aggressive retention forever).
import { describe, expect, it } from 'vitest'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_expiry')

async function register(group: string, topicId: string, silentSeconds: number) {
  await m.sql(
    `INSERT INTO ${m.tables.consumerRegistration} (consumer_group, topic_id, last_heartbeat_at)
     VALUES ($1, $2, now() - $3 * interval '1 second')`,
    [group, topicId, silentSeconds],
  )
}

async function registrations(topicId: string): Promise<string[]> {
  const rows = await m.sql<{ g: string }>(`SELECT consumer_group AS g FROM ${m.tables.consumerRegistration} WHERE topic_id = $1 ORDER BY 1`, [
    topicId,
  ])
  return rows.map((r) => r.g)
}

describe('expiry', () => {
  it('expires what was silent longer than the expiry, logs a line per registration, keeps the live ones', async () => {
    const topic = await m.retentionTopic()
    await register('stale', topic.id, 7200)
    await register('fresh', topic.id, 10)
    await m.sql(
      `INSERT INTO ${m.tables.groupMember} (consumer_group, member_id, client_id, client_host, session_timeout_ms, heartbeat_at)
       VALUES ('stale', 'm-old', 'c', 'h', 10000, now() - interval '2 hours'), ('fresh', 'm-new', 'c', 'h', 10000, now())`,
    )
    await m.sql(
      `INSERT INTO ${m.tables.partitionLease} (consumer_group, topic_id, partition_id, lock_owner, locked_until)
       VALUES ('stale', $1, 0, 'stale:x', now() - interval '2 hours'), ('fresh', $1, 0, 'fresh:y', now() + interval '1 minute')`,
      [topic.id],
    )
    m.lines.length = 0

    const report = await m.run({}, { registrationExpirySeconds: 3600 })

    expect(report.expired.registrations).toEqual([{ group: 'stale', topic: topic.name, lastHeartbeatAt: expect.any(Date) }])
    expect(await registrations(topic.id)).toEqual(['fresh'])
    expect(report.expired.members).toBe(1)
    expect(report.expired.partitionLeases).toBe(1)
    const members = await m.sql<{ member_id: string }>(`SELECT member_id FROM ${m.tables.groupMember} ORDER BY 1`)
    expect(members).toEqual([{ member_id: 'm-new' }])
    const logged = m.lines.filter((l) => l.message === 'Expired consumer registration')
    expect(logged).toEqual([expect.objectContaining({ level: 'INFO', extra: expect.objectContaining({ groupId: 'stale', topic: topic.name }) })])
  })

  it('expires nothing when the expiry is 0', async () => {
    const topic = await m.retentionTopic()
    await register('ancient', topic.id, 90 * 86_400)

    const report = await m.run({}, { registrationExpirySeconds: 0 })

    expect(report.expired.registrations).toEqual([])
    expect(await registrations(topic.id)).toEqual(['ancient'])
  })
})

// Aggressive retention deletes only what every registered group has committed, never what one still needs.
import { describe, expect, it } from 'vitest'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_aggressive')

async function aggressiveTopic(rows = 10) {
  const topic = await m.retentionTopic({ aggressive: true })
  await m.insertRows(topic.id, 0, rows, { ageSeconds: 60 })
  return topic
}

async function register(group: string, topicId: string, heartbeatAgeSeconds = 0) {
  await m.sql(
    `INSERT INTO ${m.tables.consumerRegistration} (consumer_group, topic_id, last_heartbeat_at)
     VALUES ($1, $2, now() - $3 * interval '1 second')`,
    [group, topicId, heartbeatAgeSeconds],
  )
}

async function commit(group: string, topicId: string, offset: number) {
  await m.sql(`INSERT INTO ${m.tables.consumerOffset} (consumer_group, topic_id, partition_id, offset_value) VALUES ($1, $2, 0, $3)`, [
    group,
    topicId,
    offset,
  ])
}

describe('aggressive retention', () => {
  it('deletes only seq <= the registered group offset (5 of 10); an unregistered lagging group does not block', async () => {
    const topic = await aggressiveTopic()
    await register('reg', topic.id)
    await commit('reg', topic.id, 5)
    await commit('unregistered', topic.id, 1)

    const report = await m.run({ batchDeleteLimit: 2 })

    expect(await m.seqs(topic.id)).toEqual([6, 7, 8, 9, 10])
    expect(report.byTopic[topic.name].aggressive).toBe(5)
    expect(report.aggressiveBlocked.filter((b) => b.topic === topic.name)).toEqual([])
  })

  it('uses the lowest offset over every registered group', async () => {
    const topic = await aggressiveTopic()
    for (const [group, offset] of [
      ['a', 9],
      ['b', 3],
      ['c', 10],
    ] as const) {
      await register(group, topic.id)
      await commit(group, topic.id, offset)
    }
    await m.run()
    expect(await m.seqs(topic.id)).toEqual([4, 5, 6, 7, 8, 9, 10])
  })

  it('is blocked by a registered group that has no offset yet', async () => {
    const topic = await aggressiveTopic()
    await register('done', topic.id)
    await commit('done', topic.id, 10)
    await register('fresh', topic.id)

    const report = await m.run()

    expect(await m.seqs(topic.id)).toHaveLength(10)
    expect(report.aggressiveBlocked).toContainEqual({
      topic: topic.name,
      partition: 0,
      reason: 'registered group has no offset',
      group: 'fresh',
    })
  })

  it('skips a partition where a registered group is STUCK_AHEAD of the last seq handed out', async () => {
    const topic = await aggressiveTopic()
    await register('ok', topic.id)
    await commit('ok', topic.id, 8)
    await register('ahead', topic.id)
    await commit('ahead', topic.id, 50)

    const report = await m.run()

    expect(await m.seqs(topic.id)).toHaveLength(10)
    expect(report.aggressiveBlocked).toContainEqual({ topic: topic.name, partition: 0, reason: 'STUCK_AHEAD', group: 'ahead' })
    expect(m.lines.some((l) => l.level === 'WARN' && l.message.includes('STUCK_AHEAD'))).toBe(true)
  })

  it('does nothing without any registered group (as DataHub)', async () => {
    const topic = await aggressiveTopic()
    await commit('unregistered', topic.id, 10)
    const report = await m.run()
    expect(await m.seqs(topic.id)).toHaveLength(10)
    expect(report.aggressiveBlocked).toContainEqual({ topic: topic.name, partition: 0, reason: 'no registered group', group: null })
  })

  it('ignores a registration silent longer than the expiry (and expires it)', async () => {
    const topic = await aggressiveTopic()
    await register('live', topic.id)
    await commit('live', topic.id, 7)
    await register('gone', topic.id, 7200) // never committed: would block if it counted

    const report = await m.run({}, { registrationExpirySeconds: 3600 })

    expect(await m.seqs(topic.id)).toEqual([8, 9, 10])
    expect(report.expired.registrations).toContainEqual(expect.objectContaining({ group: 'gone', topic: topic.name }))
  })
})

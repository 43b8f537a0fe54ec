// Whole message partitions are dropped once every row in them is past its own topic's age retention, whatever
// lease or ack rows point at them; sequence numbers continue afterwards.
import { describe, expect, it } from 'vitest'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_partitions')
const DAY = 86_400

async function partitionOf(topicId: string): Promise<string> {
  const rows = await m.sql<{ name: string }>(
    `SELECT DISTINCT c.relname AS name FROM ${m.tables.message} x JOIN pg_class c ON c.oid = x.tableoid WHERE x.topic_id = $1`,
    [topicId],
  )
  expect(rows).toHaveLength(1)
  return rows[0].name
}

async function exists(name: string): Promise<boolean> {
  const [row] = await m.sql<{ t: string | null }>('SELECT to_regclass($1) AS t', [`"${m.tables.schema}"."${name}"`])
  return row.t !== null
}

async function lease(messageFilter: string, values: unknown[]) {
  await m.sql(
    `INSERT INTO ${m.tables.messageGroupLease} (message_id, message_enqueued_at, consumer_group, lock_owner, locked_until)
     SELECT id, enqueued_at, 'datahub-group', '__acked__', 'epoch' FROM ${m.tables.message} WHERE ${messageFilter}`,
    values,
  )
}

describe('partition drops', () => {
  it('drops an expired partition although ack rows reference its messages, sweeps them, and seqs continue', async () => {
    const old = await m.retentionTopic({ retentionSeconds: DAY })
    const live = await m.retentionTopic({ retentionSeconds: DAY })
    await m.insertRows(old.id, 0, 3, { ageSeconds: 5 * DAY })
    await m.insertRows(live.id, 0, 1)
    await lease('topic_id = ANY($1::int8[])', [[old.id, live.id]])
    const name = await partitionOf(old.id)

    const report = await m.run()

    expect(report.partitions.dropped).toContain(name)
    expect(await exists(name)).toBe(false)
    expect(report.leasesSwept).toBe(3)
    const leases = await m.sql<{ n: string }>(`SELECT count(*)::text AS n FROM ${m.tables.messageGroupLease}`)
    expect(leases[0].n).toBe('1') // the live message's ack row stays
    expect(report.byTopic[old.name]).toBeUndefined() // gone with the partition, not row by row

    const producer = await m.producer()
    const [sent] = await producer.send({ topic: old.name, messages: [{ value: 'after the drop' }] })
    expect(sent.baseOffset).toBe('3')
    expect(await m.seqs(old.id)).toEqual([4])
  })

  it('keeps a partition holding rows of a keep-forever topic and deletes the other rows there by age', async () => {
    const forever = await m.retentionTopic({ retentionSeconds: 0 })
    const short = await m.retentionTopic({ retentionSeconds: DAY })
    await m.insertRows(forever.id, 0, 1, { ageSeconds: 10 * DAY })
    await m.insertRows(short.id, 0, 2, { ageSeconds: 10 * DAY })
    const name = await partitionOf(forever.id)
    expect(await partitionOf(short.id)).toBe(name)

    const report = await m.run()

    expect(report.partitions.kept).toContain(name)
    expect(await exists(name)).toBe(true)
    expect(await m.seqs(forever.id)).toEqual([1])
    expect(await m.seqs(short.id)).toEqual([])
    expect(report.byTopic[short.name].age).toBe(2)
  })

  it('keeps a partition whose rows are still inside their topic window', async () => {
    const long = await m.retentionTopic({ retentionSeconds: 30 * DAY })
    await m.insertRows(long.id, 0, 2, { ageSeconds: 14 * DAY })
    const name = await partitionOf(long.id)

    const report = await m.run()

    expect(report.partitions.kept).toContain(name)
    expect(await m.seqs(long.id)).toEqual([1, 2])
  })

  it('never drops the current partition or the premade ones', async () => {
    const topic = await m.retentionTopic({ retentionSeconds: 60 })
    await m.insertRows(topic.id, 0, 1)
    const current = await partitionOf(topic.id)

    await m.run()

    expect(await exists(current)).toBe(true)
    const [{ n }] = await m.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass
         AND substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''([^'']+)''\\)')::timestamptz > now()`,
      [m.tables.message],
    )
    expect(n).toBe(m.kafka.config.partitioning.premake)
  })
})

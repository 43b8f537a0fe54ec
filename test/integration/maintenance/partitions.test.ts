// Whole message partitions are dropped once every row in them is past its own topic's age retention and the drop
// deletes only a prefix of each log, never its newest row (the anchor), whatever lease or ack rows point at them;
// sequence numbers continue afterwards.
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
    await m.insertRows(old.id, 0, 1) // the log's anchor, in today's partition

    const report = await m.run()

    expect(report.partitions.dropped).toContain(name)
    expect(await exists(name)).toBe(false)
    expect(report.leasesSwept).toBe(3)
    const leases = await m.sql<{ n: string }>(`SELECT count(*)::text AS n FROM ${m.tables.messageGroupLease}`)
    expect(leases[0].n).toBe('1') // the live message's ack row stays
    expect(report.byTopic[old.name]).toBeUndefined() // gone with the partition, not row by row

    const producer = await m.producer()
    const [sent] = await producer.send({ topic: old.name, messages: [{ value: 'after the drop' }] })
    expect(sent.baseOffset).toBe('4')
    expect(await m.seqs(old.id)).toEqual([4, 5])
  })

  it("keeps an expired partition that holds a quiet log's newest row; the log goes on from it", async () => {
    const quiet = await m.retentionTopic({ retentionSeconds: DAY })
    await m.insertRows(quiet.id, 0, 3, { ageSeconds: 6 * DAY })
    const name = await partitionOf(quiet.id)

    const report = await m.run()

    expect(report.partitions.kept).toContain(name)
    expect(await m.seqs(quiet.id)).toEqual([3]) // age retention took the rest, the anchor stays
    expect(report.byTopic[quiet.name].age).toBe(2)
    const producer = await m.producer()
    const [sent] = await producer.send({ topic: quiet.name, messages: [{ value: 'next' }] })
    expect(sent.baseOffset).toBe('3')
  })

  it('keeps an expired partition whose rows are not a prefix of their log (a transaction older than its seq)', async () => {
    const topic = await m.retentionTopic({ retentionSeconds: DAY })
    // seq 1 and 3 carry an old enqueued_at (3 as a transaction that began long before it committed), 2 and 4 are new
    await m.insertRows(topic.id, 0, 1, { ageSeconds: 7 * DAY })
    await m.insertRows(topic.id, 0, 1)
    await m.insertRows(topic.id, 0, 1, { ageSeconds: 7 * DAY })
    await m.insertRows(topic.id, 0, 1)
    const [old] = await m.sql<{ name: string }>(
      `SELECT c.relname AS name FROM ${m.tables.message} x JOIN pg_class c ON c.oid = x.tableoid
       WHERE x.topic_id = $1 AND x.enqueue_seq = 3`,
      [topic.id],
    )

    const report = await m.run()

    expect(report.partitions.kept).toContain(old.name)
    // age retention deletes the log's prefix up to the first young row: 3 stays behind 2, no hole
    expect(await m.seqs(topic.id)).toEqual([2, 3, 4])
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
    expect(await m.seqs(short.id)).toEqual([2]) // the anchor
    expect(report.byTopic[short.name].age).toBe(1)
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

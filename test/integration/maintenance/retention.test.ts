// Age, row-cap and byte-cap retention delete exactly what their rule says, oldest first, in bounded batches.
import { describe, expect, it } from 'vitest'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_retention')

describe('age retention', () => {
  it('deletes the rows older than their topic retention and nothing else; retention 0 keeps everything', async () => {
    const aged = await m.retentionTopic({ retentionSeconds: 3600 })
    const forever = await m.retentionTopic({ retentionSeconds: 0 })
    await m.insertRows(aged.id, 0, 5, { ageSeconds: 7200 })
    await m.insertRows(aged.id, 0, 5, { ageSeconds: 600 })
    await m.insertRows(forever.id, 0, 3, { ageSeconds: 7200 })

    const report = await m.run({ batchDeleteLimit: 2 })

    expect(await m.seqs(aged.id)).toEqual([6, 7, 8, 9, 10])
    expect(await m.seqs(forever.id)).toEqual([1, 2, 3])
    expect(report.byTopic[aged.name]).toEqual({ age: 5, rowCap: 0, byteCap: 0, aggressive: 0 })
    expect(report.byTopic[forever.name]).toBeUndefined()
    expect(report.truncated).toEqual([])
  })

  it('moves an offset stranded below deleted rows up to the next stored row, and never moves one back', async () => {
    const topic = await m.retentionTopic({ retentionSeconds: 3600 })
    await m.insertRows(topic.id, 0, 4, { ageSeconds: 7200 })
    await m.insertRows(topic.id, 0, 2, { ageSeconds: 60 })
    await m.sql(
      `INSERT INTO ${m.tables.consumerOffset} (consumer_group, topic_id, partition_id, offset_value)
       VALUES ('behind', $1, 0, 1), ('ahead', $1, 0, 5)`,
      [topic.id],
    )

    const report = await m.run()

    expect(await m.seqs(topic.id)).toEqual([5, 6])
    const offsets = await m.sql<{ consumer_group: string; offset_value: string }>(
      `SELECT consumer_group, offset_value::text FROM ${m.tables.consumerOffset} WHERE topic_id = $1 ORDER BY 1`,
      [topic.id],
    )
    expect(offsets).toEqual([
      { consumer_group: 'ahead', offset_value: '5' },
      { consumer_group: 'behind', offset_value: '4' },
    ])
    expect(report.offsetsAdvanced).toBeGreaterThanOrEqual(1)
  })
})

describe('row cap', () => {
  it('with 25 rows and a cap of 10 deletes exactly the 15 oldest, across partitions, in batches', async () => {
    const topic = await m.retentionTopic({ partitions: 2, maxRows: 10 })
    // alternate partitions, oldest first: row i (1-based) is the i-th oldest
    for (let i = 0; i < 25; i++) await m.insertRows(topic.id, i % 2, 1, { ageSeconds: 1000 - i })

    const report = await m.run({ batchDeleteLimit: 4 })

    expect(report.byTopic[topic.name].rowCap).toBe(15)
    // partition 0 held rows 1,3,..,25 (seqs 1..13), partition 1 rows 2,4,..,24 (seqs 1..12); rows 16..25 stay
    expect(await m.seqs(topic.id, 0)).toEqual([9, 10, 11, 12, 13])
    expect(await m.seqs(topic.id, 1)).toEqual([8, 9, 10, 11, 12])
    expect((await m.run()).byTopic[topic.name]).toBeUndefined()
  })

  it('stops at the per-run batch cap and finishes in the next run', async () => {
    const topic = await m.retentionTopic({ maxRows: 3 })
    await m.insertRows(topic.id, 0, 13, { ageSeconds: 100 })

    const first = await m.run({ batchDeleteLimit: 2, maxBatchesPerStep: 3 })
    expect(first.byTopic[topic.name].rowCap).toBe(6)
    expect(first.truncated).toContain(`rowCap:${topic.name}`)
    const second = await m.run({ batchDeleteLimit: 2, maxBatchesPerStep: 3 })
    expect(second.byTopic[topic.name].rowCap).toBe(4)
    expect(await m.seqs(topic.id)).toEqual([11, 12, 13])
  })
})

describe('byte cap', () => {
  it('deletes the shortest oldest-first run of rows that brings the payload total down to the cap', async () => {
    const topic = await m.retentionTopic({ maxBytes: 250 })
    // 460 bytes, 210 over: 100 + 50 + 0 + 200 are the oldest rows that cover it; 30 + 70 + 10 = 110 stay
    await m.insertRows(topic.id, 0, 7, { ageSeconds: 100, bytes: [100, 50, 0, 200, 30, 70, 10] })

    const report = await m.run({ batchDeleteLimit: 2 })

    expect(report.byTopic[topic.name].byteCap).toBe(4)
    expect(await m.seqs(topic.id)).toEqual([5, 6, 7])
  })

  it('deletes nothing more once the total equals the cap', async () => {
    const topic = await m.retentionTopic({ maxBytes: 200 })
    await m.insertRows(topic.id, 0, 3, { ageSeconds: 100, bytes: 100 })

    const report = await m.run()

    expect(report.byTopic[topic.name].byteCap).toBe(1)
    expect(await m.seqs(topic.id)).toEqual([2, 3])
    const [{ total }] = await m.sql<{ total: string }>(`SELECT sum(payload_bytes)::text AS total FROM ${m.tables.message} WHERE topic_id = $1`, [
      topic.id,
    ])
    expect(total).toBe('200')
  })
})

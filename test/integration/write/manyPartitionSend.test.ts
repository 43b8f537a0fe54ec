// Issue #36: a keyed send over many partitions is ONE statement (one transaction), not one per partition, with every
// guarantee of the per-partition statements: each partition's offsets contiguous after what it held, keys in send
// order, the metadata KafkaJS returns (base offset, log start) per partition.
import { describe, expect, it } from 'vitest'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-many-partitions')

describe('a send over many partitions', () => {
  it('is one transaction; offsets per partition continue contiguously, keys keep their order, metadata is per partition', async () => {
    const partitions = 64
    const topic = await t.createTopic(partitions)
    const producer = await t.producer()
    // something stored first in a few partitions, so the ranges do not all start at 0
    await producer.send({ topic, messages: [0, 1, 1, 5].map((partition) => ({ value: 'before', partition })) })
    const messages = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i % 300}`, value: `v${i}` }))
    const sent = await producer.send({ topic, messages })

    const { rows } = await t.db.pool.query<{ partition_id: number; seq: string; key: string; value: string; tx: string }>(
      `SELECT m.partition_id, m.enqueue_seq::text AS seq, m.routing_key AS key, convert_from(m.payload, 'UTF8') AS value, m.xmin::text AS tx
       FROM "${t.db.schema}".metadata_queue_message m WHERE convert_from(m.payload, 'UTF8') <> 'before' ORDER BY m.partition_id, m.enqueue_seq`,
    )
    expect(rows).toHaveLength(1000)
    expect(new Set(rows.map((r) => r.tx)).size).toBe(1)
    const before = new Map([
      [0, 1],
      [1, 2],
      [5, 1],
    ])
    const byPartition = new Map<number, typeof rows>()
    for (const r of rows) byPartition.set(r.partition_id, [...(byPartition.get(r.partition_id) ?? []), r])
    expect(byPartition.size).toBeGreaterThan(32)
    for (const [p, got] of byPartition) {
      const held = before.get(p) ?? 0
      // contiguous, right after what the partition held (seq = offset + 1)
      expect(got.map((r) => Number(r.seq))).toEqual(got.map((_, i) => held + 1 + i))
      // the send's order within the partition
      const expected = messages.map((m, i) => ({ ...m, i })).filter((m) => got.some((r) => r.value === m.value))
      expect(got.map((r) => r.value)).toEqual(expected.map((m) => m.value))
      const meta = sent.find((s) => s.partition === p)!
      expect(meta.baseOffset).toBe(String(held))
      expect(meta.logStartOffset).toBe('0')
    }
    // one key, one partition
    const partitionOfKey = new Map<string, number>()
    for (const r of rows) expect(partitionOfKey.get(r.key) ?? r.partition_id).toBe((partitionOfKey.set(r.key, r.partition_id), r.partition_id))
  })
})

// One sendBatch over many more partitions than the pool has connections (found by the console's tests: 300
// partitions on a pool of 8 failed with "all 8 connections in use for 1000 ms"). A send waits for connections it
// takes itself; it must not time itself out.
import { describe, expect, it } from 'vitest'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('wide_send', { pool: { max: 2, connectionTimeoutMillis: 250 } })

describe('a send to many partitions on a small pool', () => {
  it('writes every partition, however many more partitions there are than connections', async () => {
    const partitions = 200
    const topic = await t.createTopic(partitions)
    const producer = await t.producer()
    const sent = await producer.sendBatch({
      topicMessages: [{ topic, messages: Array.from({ length: partitions }, (_, partition) => ({ value: `v${partition}`, partition })) }],
    })
    expect(sent.map((r) => r.partition).sort((a, b) => a - b)).toEqual(Array.from({ length: partitions }, (_, p) => p))
    const { rows } = await t.db.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${t.db.schema}".metadata_queue_message`)
    expect(Number(rows[0].n)).toBe(partitions)
  }, 60_000)
})

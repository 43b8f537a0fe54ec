// Scenario 1 of issue #16: DataHub writers (advisory lock + MAX(enqueue_seq)+1) and writers of this library, in
// separate processes, on one topic at the same time. Both families must obey one sequence protocol: no
// (partition, enqueue_seq) pair twice, no gap, and a fresh group of either family reads every row.
import { describe, expect, it } from 'vitest'
import { drainDataHubGroup, repeated } from '../../datahub-client/drain.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useSharingFixture, type Writer } from './sharing.js'

const f = useSharingFixture('dh_seq')
// 4 + 4 writers as in the issue; DATAHUB_SCENARIO_COUNT=2000 reproduces its full size
const PER_WRITER = Number(process.env.DATAHUB_SCENARIO_COUNT ?? 400)
// DataHub's enqueues all wait for the topic row its per-enqueue upsert locks (reference §11 bug 5): ~20 ms each here
const WRITE_TIMEOUT_MS = Math.max(120_000, PER_WRITER * 4 * 40)

describe('DataHub and library writers on one topic', () => {
  it(
    'never reuse a sequence number and leave no gap; fresh groups of both families read every row',
    async () => {
      const topic = await f.createTopic(4, 'shared-seq')
      const writers: Writer[] = []
      for (let i = 0; i < 4; i++) {
        // half of each family writes one message per transaction, half in batches
        writers.push({ family: 'datahub', topic, count: PER_WRITER, batch: i % 2 === 0 ? 1 : 10, id: String(i) })
        writers.push({ family: 'ours', topic, count: PER_WRITER, batch: i % 2 === 0 ? 1 : 10, id: String(i) })
      }
      await f.writeConcurrently(writers, WRITE_TIMEOUT_MS)
      const total = 8 * PER_WRITER
      const topicId = await f.topicId(topic)

      const dup = await f.sql<{ n: string }>(
        `SELECT count(*)::text AS n FROM (SELECT 1 FROM ${f.tables.message} WHERE topic_id = $1
         GROUP BY partition_id, enqueue_seq HAVING count(*) > 1) d`,
        [topicId],
      )
      expect.soft(Number(dup[0].n), 'duplicate (partition, seq) pairs').toBe(0)
      const shape = await f.sql<{ partition_id: number; rows: string; lo: string; hi: string }>(
        `SELECT partition_id, count(*)::text AS rows, min(enqueue_seq)::text AS lo, max(enqueue_seq)::text AS hi
       FROM ${f.tables.message} WHERE topic_id = $1 GROUP BY 1 ORDER BY 1`,
        [topicId],
      )
      expect(shape.reduce((a, r) => a + Number(r.rows), 0)).toBe(total)
      for (const r of shape) expect.soft({ p: r.partition_id, lo: r.lo, hi: r.hi }).toEqual({ p: r.partition_id, lo: '1', hi: r.rows })

      const dataHubRead = await drainDataHubGroup(f.dataHub(), uniqueName('dh-fresh'), topic)
      const dataHubValues = dataHubRead.map((m) => m.payload.toString())
      expect.soft(repeated(dataHubValues).size, 'rows a fresh DataHub group received twice').toBe(0)
      expect.soft(dataHubValues.length, 'rows a fresh DataHub group received').toBe(total)

      const ours = await f.consumeOurs(topic, total, { timeoutMs: 30_000, allowFewer: true })
      expect(new Set(ours.map((m) => m.value)).size, 'distinct rows a fresh group of ours received').toBe(total)
    },
    WRITE_TIMEOUT_MS + 120_000,
  )
})

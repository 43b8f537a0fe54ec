// Scenarios 5 and 6 of issue #16: retention of either family keeps each partition's anchor row (its highest seq),
// so DataHub's MAX(enqueue_seq)+1 never restarts under a committed offset; DataHub's own retention entry point
// `<prefix>_apply_retention()` exists; topics we create carry DataHub's default content type.
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { drainDataHubGroup } from '../../datahub-client/drain.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useSharingFixture } from './sharing.js'

const f = useSharingFixture('dh_retention')

async function ourMaintenance(): Promise<void> {
  const report = await runMaintenance({ pool: f.db.pool, tables: f.tables, maintenance: resolveConfig(f.db.options).maintenance }, { vacuum: false })
  if (report.skipped || report.errors.length > 0) throw new Error(`maintenance: ${JSON.stringify(report)}`)
}

const seqs = async (topicId: string) =>
  (await f.sql<{ s: string }>(`SELECT enqueue_seq::text AS s FROM ${f.tables.message} WHERE topic_id = $1 ORDER BY enqueue_seq`, [topicId])).map(
    (r) => Number(r.s),
  )

describe('retention shared with DataHub (scenario 5)', () => {
  it("DataHub's retention call exists and runs", async () => {
    await f.producer() // migrated schema
    await expect(f.dataHub().applyRetention()).resolves.toBeUndefined()
  })

  it('aggressive retention keeps the anchor row, so the next DataHub enqueue continues the sequence for both families', async () => {
    // two partitions, DataHub's default count, so DataHub's topic upsert does not grow it; key 'k' is partition 1
    const topic = await f.createTopic(2, 'aggr')
    const topicId = await f.topicId(topic)
    await f.sql(`UPDATE ${f.tables.topic} SET aggressive_retention = true WHERE id = $1`, [topicId])
    const producer = await f.producer()
    await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: `old.${i}` })) })
    const dataHubGroup = uniqueName('dh')
    const ourGroup = uniqueName('ours')
    expect(await drainDataHubGroup(f.dataHub(), dataHubGroup, topic)).toHaveLength(5)
    expect(await f.consumeOurs(topic, 5, { groupId: ourGroup })).toHaveLength(5)

    await ourMaintenance()
    expect(await seqs(topicId), 'rows left by our retention').toEqual([5])
    await f.dataHub().applyRetention()
    expect(await seqs(topicId), "rows left by DataHub's retention call").toEqual([5])

    const handle = await f.dataHub().enqueue(topic, { routingKey: 'k', payload: Buffer.from('new.0') })
    expect(handle.seq, 'DataHub MAX+1 after retention').toBe(6)
    const dataHubNext = await drainDataHubGroup(f.dataHub(), dataHubGroup, topic)
    expect(
      dataHubNext.map((m) => m.payload.toString()),
      'DataHub group after retention',
    ).toEqual(['new.0'])
    const ourNext = await f.consumeOurs(topic, 1, { groupId: ourGroup, timeoutMs: 15_000, allowFewer: true })
    expect(
      ourNext.map((m) => [m.value, m.offset]),
      'our group after retention',
    ).toEqual([['new.0', '5']])
  })
})

describe('content type of topics we create (scenario 6)', () => {
  it("is DataHub's application/avro, so DataHub resolves a content type for our rows", async () => {
    const topic = await f.createTopic(1, 'ct')
    const [row] = await f.sql<{ mime: string | null }>(
      `SELECT c.mime FROM ${f.tables.topic} t LEFT JOIN ${f.tables.contentType} c ON c.id = t.default_content_type_id
       WHERE t.topic_name = $1`,
      [topic],
    )
    expect(row.mime).toBe('application/avro')
    const producer = await f.producer()
    await producer.send({ topic, messages: [{ key: 'k', value: 'v' }] })
    const got = await drainDataHubGroup(f.dataHub(), uniqueName('dh'), topic)
    expect(got.map((m) => m.mime)).toEqual(['application/avro'])
  })
})

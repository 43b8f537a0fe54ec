// Scenarios 2 and 3 of issue #16: rows DataHub writes are seen by our offsets (watermarks, commits, start
// positions), topics only DataHub created work for our consumer and admin, and one group's offsets mean the same
// to both families: offset_value is the truth, whichever client committed it.
import type { Admin } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { drainDataHubGroup } from '../../datahub-client/drain.js'
import { DATAHUB_TOPIC_DEFAULTS, DataHubQueue } from '../../datahub-client/queue.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useSharingFixture } from './sharing.js'

const f = useSharingFixture('dh_offsets')
// DataHub's per-message SQL is slow on a busy shared machine: a bound that catches hangs, not a timing claim
const LOADED_MACHINE_TIMEOUT_MS = 90_000
let admin: Admin

beforeAll(async () => {
  admin = f.kafka.admin()
  await admin.connect()
})
afterAll(async () => {
  await admin?.disconnect()
})

/** `count` DataHub rows on `topic`, keys spread over the partitions. */
async function dataHubWrites(topic: string, count: number, tag: string): Promise<void> {
  const items = Array.from({ length: count }, (_, i) => ({ routingKey: `${tag}k${i % 16}`, payload: Buffer.from(`${tag}.${i}`) }))
  for (let i = 0; i < items.length; i += 50) await f.dataHub().enqueueBatch(topic, items.slice(i, i + 50))
}

const rowsPerPartition = async (topic: string) =>
  new Map(
    (
      await f.sql<{ p: number; n: string }>(`SELECT partition_id AS p, count(*)::text AS n FROM ${f.tables.message} WHERE topic_id = $1 GROUP BY 1`, [
        await f.topicId(topic),
      ])
    ).map((r) => [r.p, r.n]),
  )

const offsetsOf = async (groupId: string, topic: string) =>
  Object.fromEntries((await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions.map((p) => [p.partition, p.offset]))

describe('rows DataHub writes (scenario 2)', () => {
  it(
    'advance the high watermark and the commits of our consumer on a topic we created',
    async () => {
      const topic = await f.createTopic(4, 'dh-rows')
      await dataHubWrites(topic, 400, 'a')
      const group = uniqueName('ours')
      const got = await f.consumeOurs(topic, 400, { groupId: group })
      expect(new Set(got.map((m) => m.value)).size).toBe(400)
      const counts = await rowsPerPartition(topic)
      const high = Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]))
      const expected = Object.fromEntries([0, 1, 2, 3].map((p) => [p, counts.get(p) ?? '0']))
      expect(high, 'high watermarks').toEqual(expected)
      expect(await offsetsOf(group, topic), 'committed offsets after consuming every row').toEqual(expected)
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )

  it(
    'on a topic only DataHub created (ensure_topic), our consumer reads every row and admin reports them',
    async () => {
      const topic = uniqueName('dh-only')
      await f.dataHub().ensureTopic(topic)
      await dataHubWrites(topic, 100, 'b')
      const got = await f.consumeOurs(topic, 100, { timeoutMs: 20_000, allowFewer: true })
      expect(got.length, 'rows our consumer delivered').toBe(100)
      const counts = await rowsPerPartition(topic)
      const high = Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]))
      expect(high).toEqual(Object.fromEntries([0, 1].map((p) => [p, counts.get(p) ?? '0'])))
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )

  it(
    'partitions added by DataHub (its topic upsert grows the count) are read and reported like the others',
    async () => {
      const topic = uniqueName('dh-grown')
      await f.dataHub().ensureTopic(topic) // DataHub's default: 2 partitions
      const wider = new DataHubQueue(f.db.pool, f.db.schema, 'metadata_queue', { ...DATAHUB_TOPIC_DEFAULTS, partitionCount: 4 })
      await wider.enqueueBatch(
        topic,
        Array.from({ length: 80 }, (_, i) => ({ routingKey: `g${i % 16}`, payload: Buffer.from(`h.${i}`) })),
      )
      const counts = await rowsPerPartition(topic)
      expect(counts.size, 'rows on all four partitions').toBe(4)
      const got = await f.consumeOurs(topic, 80, { timeoutMs: 20_000, allowFewer: true })
      expect(new Set(got.map((m) => m.value)).size).toBe(80)
      const high = Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]))
      expect(high).toEqual(Object.fromEntries([0, 1, 2, 3].map((p) => [p, counts.get(p)])))
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )
})

describe("one group's offsets, committed by either family (scenario 3)", () => {
  it(
    'a DataHub commit reads as committed (not -1) and our consumer continues right after it, without STUCK_AHEAD',
    async () => {
      const topic = uniqueName('dh-commit')
      await f.dataHub().ensureTopic(topic)
      await dataHubWrites(topic, 60, 'c')
      const group = uniqueName('shared')
      const first = await drainDataHubGroup(f.dataHub(), group, topic)
      expect(first).toHaveLength(60)
      const counts = await rowsPerPartition(topic)
      expect(await offsetsOf(group, topic), 'offsets DataHub committed, read by our admin').toEqual(
        Object.fromEntries([0, 1].map((p) => [p, counts.get(p) ?? '0'])),
      )

      await dataHubWrites(topic, 40, 'd')
      // the group moves to our consumers: DataHub's stopped polling it (as 30 s ago; else ours refuse the group)
      await f.sql(`UPDATE ${f.tables.consumerRegistration} SET last_heartbeat_at = now() - interval '31 seconds' WHERE consumer_group = $1`, [group])
      const warnings: string[] = []
      const next = await f.consumeOurs(topic, 40, { groupId: group, fromBeginning: true, timeoutMs: 20_000, allowFewer: true, warnings })
      expect(next.map((m) => m.value.split('.')[0]).sort(), 'our consumer got only the 40 rows after the DataHub commit').toEqual(
        Array.from({ length: 40 }, () => 'd'),
      )
      expect(warnings.filter((w) => /STUCK_AHEAD/.test(w))).toEqual([])
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )

  it(
    'our commit is where a DataHub consumer of the group continues',
    async () => {
      const topic = await f.createTopic(2, 'ours-commit')
      await dataHubWrites(topic, 60, 'e')
      const group = uniqueName('shared')
      expect(await f.consumeOurs(topic, 60, { groupId: group })).toHaveLength(60)
      await dataHubWrites(topic, 40, 'f')
      const rest = await drainDataHubGroup(f.dataHub(), group, topic)
      expect(
        rest.map((m) => m.payload.toString().split('.')[0]),
        'DataHub got only the 40 rows after our commit',
      ).toEqual(Array.from({ length: 40 }, () => 'f'))
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )

  it(
    'a DataHub commit over the start position our consumer wrote reads as committed',
    async () => {
      const topic = uniqueName('dh-over-start')
      await f.dataHub().ensureTopic(topic)
      const group = uniqueName('shared')
      // our consumer joins and leaves without processing anything: it writes its start position, commits nothing
      expect(await f.consumeOurs(topic, 0, { groupId: group })).toHaveLength(0)
      expect(Object.values(await offsetsOf(group, topic))).toEqual(['-1', '-1'])
      await dataHubWrites(topic, 20, 'g')
      expect(await drainDataHubGroup(f.dataHub(), group, topic)).toHaveLength(20)
      const counts = await rowsPerPartition(topic)
      expect(await offsetsOf(group, topic)).toEqual(Object.fromEntries([0, 1].map((p) => [p, counts.get(p) ?? '0'])))
    },
    LOADED_MACHINE_TIMEOUT_MS,
  )
})

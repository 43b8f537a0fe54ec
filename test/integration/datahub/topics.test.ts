// seedDataHubTopics against a real catalogue table.
import { describe, expect, it } from 'vitest'
import { DATAHUB_TOPICS, seedDataHubTopics } from '../../../src/datahub/index.js'
import { tablesFor } from '../../../src/db/tables.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('datahub_topics')
const tables = () => tablesFor(t.db.schema, 'metadata_queue')

async function catalogue() {
  const tt = tables()
  const res = await t.db.pool.query(
    `SELECT t.topic_name AS name, t.partition_count AS partitions, t.retention_max_age_seconds AS retention,
            t.max_rows_per_topic::int AS "maxRows", t.aggressive_retention AS aggressive, c.mime,
            (SELECT count(*)::int FROM ${tt.partitionSeq} s WHERE s.topic_id = t.id) AS ledger
     FROM ${tt.topic} t LEFT JOIN ${tt.contentType} c ON c.id = t.default_content_type_id ORDER BY t.topic_name`,
  )
  return Object.fromEntries(res.rows.map((r) => [r.name, r]))
}

describe('seedDataHubTopics', () => {
  it("creates DataHub's catalogue with its partitions, retention and content type", async () => {
    const seeded = await seedDataHubTopics(t.kafka)
    expect(seeded.map((s) => s.name).sort()).toEqual(Object.values(DATAHUB_TOPICS).sort())
    expect(seeded.every((s) => s.created && s.partitionCount === 1)).toBe(true)
    const rows = await catalogue()
    const expected: Record<string, { retention: number; maxRows: number; aggressive: boolean }> = {
      MetadataChangeProposal_v1: { retention: 604800, maxRows: 0, aggressive: true },
      MetadataChangeLog_Versioned_v1: { retention: 604800, maxRows: 0, aggressive: true },
      MetadataChangeLog_Timeseries_v1: { retention: 7776000, maxRows: 0, aggressive: true },
      PlatformEvent_v1: { retention: 604800, maxRows: 0, aggressive: false },
      DataHubUpgradeHistory_v1: { retention: 0, maxRows: 10, aggressive: false },
      FailedMetadataChangeProposal_v1: { retention: 604800, maxRows: 100, aggressive: false },
      DataHubUsageEvent_v1: { retention: 604800, maxRows: 0, aggressive: false },
    }
    for (const [name, want] of Object.entries(expected)) {
      expect(rows[name]).toMatchObject({ ...want, partitions: 1, mime: 'application/avro', ledger: 1 })
    }
    // the library sees them as Kafka topics
    const admin = t.kafka.admin()
    await admin.connect()
    try {
      expect(await admin.listTopics()).toEqual(expect.arrayContaining(Object.values(DATAHUB_TOPICS)))
    } finally {
      await admin.disconnect()
    }
  })

  it('is idempotent and never shrinks partition counts', async () => {
    const grown = await seedDataHubTopics({ pool: t.db.pool, schema: t.db.schema }, { partitions: 4 })
    expect(grown.every((s) => !s.created && s.partitionCount === 4)).toBe(true)
    const again = await seedDataHubTopics(
      { pool: t.db.pool, schema: t.db.schema },
      { partitions: 1, topics: { PlatformEvent_v1: { maxRowsPerTopic: 5 } } },
    )
    expect(again.every((s) => !s.created && s.partitionCount === 4)).toBe(true)
    const rows = await catalogue()
    expect(rows.MetadataChangeProposal_v1).toMatchObject({ partitions: 4, ledger: 4 })
    expect(rows.PlatformEvent_v1).toMatchObject({ maxRows: 5 })
    expect(Object.keys(rows)).toHaveLength(7)
  })
})

// SQL for seeding DataHub's topic catalogue: DataHub's own upsert (partition counts never shrink; retention,
// content type and aggressive retention take the incoming values), plus our per-partition sequence ledger rows.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'
import type { NewTopic } from './topics.js'

/** DataHub's catalogue columns (no Kafka config entries). */
export type CatalogueRow = Omit<NewTopic, 'config'>

export interface SeededTopic {
  id: string
  name: string
  partitionCount: number
  /** false when the topic existed and was updated */
  created: boolean
}

const sql = statements('datahubTopics', (t) => ({
  contentTypeId: `SELECT id FROM ${t.contentType} WHERE mime = $1`,
  insertContentType: `INSERT INTO ${t.contentType} (mime) VALUES ($1) ON CONFLICT (mime) DO NOTHING RETURNING id`,
  upsert: `
    WITH up AS (
      INSERT INTO ${t.topic} AS t (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic,
                                   max_total_payload_bytes, aggressive_retention, default_content_type_id)
      SELECT x.name, x.partitions, x.retention, x.max_rows, x.max_bytes, x.aggressive, $7::int2
      FROM unnest($1::text[], $2::int[], $3::int[], $4::int8[], $5::int8[], $6::bool[])
             AS x(name, partitions, retention, max_rows, max_bytes, aggressive)
      ON CONFLICT (topic_name) DO UPDATE SET
        partition_count = GREATEST(EXCLUDED.partition_count, t.partition_count,
          (SELECT COALESCE(max(m.partition_id), -1) + 1 FROM ${t.message} m WHERE m.topic_id = t.id)),
        retention_max_age_seconds = EXCLUDED.retention_max_age_seconds,
        max_rows_per_topic = EXCLUDED.max_rows_per_topic,
        max_total_payload_bytes = EXCLUDED.max_total_payload_bytes,
        aggressive_retention = EXCLUDED.aggressive_retention,
        default_content_type_id = EXCLUDED.default_content_type_id
      RETURNING t.id, t.topic_name, t.partition_count, (t.xmax = 0) AS created
    ), seq AS (
      INSERT INTO ${t.partitionSeq} (topic_id, partition_id, next_seq)
      SELECT up.id, p.partition_id, COALESCE((
          SELECT max(m.enqueue_seq) FROM ${t.message} m WHERE m.topic_id = up.id AND m.partition_id = p.partition_id), 0) + 1
      FROM up CROSS JOIN LATERAL generate_series(0, up.partition_count - 1) AS p(partition_id)
      ON CONFLICT DO NOTHING
    )
    SELECT id::text AS id, topic_name AS name, partition_count AS "partitionCount", created FROM up ORDER BY topic_name`,
}))

/** The content type's id: look up, insert if missing, look up again (no identity value burnt on a hit). */
export async function contentTypeId(db: Queryable, t: Tables, mime: string): Promise<number> {
  const found = (await run<{ id: number }>(db, sql(t).contentTypeId, [mime])).rows[0]
  if (found) return found.id
  const inserted = (await run<{ id: number }>(db, sql(t).insertContentType, [mime])).rows[0]
  if (inserted) return inserted.id
  return (await run<{ id: number }>(db, sql(t).contentTypeId, [mime])).rows[0]!.id
}

export async function upsertCatalogue(db: Queryable, t: Tables, rows: CatalogueRow[], contentType: number): Promise<SeededTopic[]> {
  const res = await run<SeededTopic>(db, sql(t).upsert, [
    rows.map((r) => r.name),
    rows.map((r) => r.partitionCount),
    rows.map((r) => r.retentionMaxAgeSeconds),
    rows.map((r) => r.maxRowsPerTopic),
    rows.map((r) => r.maxTotalPayloadBytes),
    rows.map((r) => r.aggressiveRetention),
    contentType,
  ])
  return res.rows
}

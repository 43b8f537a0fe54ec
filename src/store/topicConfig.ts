import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** The Kafka-configurable part of a topic row: its config entries and the retention columns they map to. */
export interface TopicSettings {
  config: Record<string, string>
  retentionMaxAgeSeconds: number
  maxTotalPayloadBytes: number
}

const sql = statements('topicConfig', (t) => ({
  // Replaces the whole set, as Kafka's (non-incremental) AlterConfigs does.
  replace: `
    UPDATE ${t.topic}
    SET config = $2::jsonb, retention_max_age_seconds = $3, max_total_payload_bytes = $4
    WHERE topic_name = $1
    RETURNING topic_name AS name`,
}))

/** Returns false when the topic does not exist. */
export async function replaceTopicSettings(db: Queryable, t: Tables, name: string, s: TopicSettings): Promise<boolean> {
  const res = await run(db, sql(t).replace, [name, JSON.stringify(s.config), s.retentionMaxAgeSeconds, s.maxTotalPayloadBytes])
  return (res.rowCount ?? 0) > 0
}

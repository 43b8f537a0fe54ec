// A DataHub-style producer, written from the reference's SQL (datahub-pgqueue.md §2-§3, key vectors §12): per
// message, in one transaction, take pg_advisory_xact_lock(<key of topic:partition>) and insert MAX(enqueue_seq)+1
// from the rows; it never touches our ledger. Small on purpose: the fuller DataHub protocol client (receive, commit,
// retention) lives with the DataHub scenario tests.
import { createHash } from 'node:crypto'
import type pg from 'pg'
import { quoteIdent } from '../../src/db/identifiers.js'

/** DataHub's advisory-lock key: first 8 bytes of SHA-256("<topicId>:<partitionId>"), unsigned big-endian, mod 2^62. */
export function datahubLockKey(topicId: string | number | bigint, partition: number): bigint {
  const digest = createHash('sha256').update(`${topicId}:${partition}`, 'utf8').digest()
  return digest.readBigUInt64BE(0) % (1n << 62n)
}

export interface DataHubWriter {
  /** DataHub's topic upsert (ensure_topic): the partition count never shrinks; returns the topic id */
  ensureTopic(name: string, partitionCount: number): Promise<string>
  /** one message (DataHub's enqueue): returns the enqueue_seq it got */
  enqueue(topicId: string, partition: number, routingKey: string, payload: Buffer): Promise<string>
}

export function datahubWriter(client: pg.ClientBase, schema: string, prefix = 'metadata_queue'): DataHubWriter {
  const message = `${quoteIdent(schema)}.${quoteIdent(`${prefix}_message`)}`
  const topic = `${quoteIdent(schema)}.${quoteIdent(`${prefix}_topic`)}`
  return {
    async ensureTopic(name, partitionCount) {
      const res = await client.query<{ id: string }>(
        `INSERT INTO ${topic} AS t (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic, max_total_payload_bytes,
                                    aggressive_retention)
         VALUES ($1, $2, 604800, 0, 0, false)
         ON CONFLICT (topic_name) DO UPDATE SET partition_count = GREATEST(1, EXCLUDED.partition_count, t.partition_count,
           COALESCE((SELECT MAX(m.partition_id) FROM ${message} m WHERE m.topic_id = t.id), -1) + 1)
         RETURNING id::text`,
        [name, partitionCount],
      )
      return res.rows[0].id
    },
    async enqueue(topicId, partition, routingKey, payload) {
      await client.query('BEGIN')
      try {
        await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(topicId, partition).toString()])
        const res = await client.query<{ enqueue_seq: string }>(
          `WITH mx AS (SELECT COALESCE(MAX(enqueue_seq), 0) AS max_seq FROM ${message} WHERE topic_id = $1 AND partition_id = $2)
           INSERT INTO ${message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload)
           SELECT $1, $2, $3, mx.max_seq + 1, 5, $4 FROM mx
           RETURNING enqueue_seq::text`,
          [topicId, partition, routingKey, payload],
        )
        await client.query('COMMIT')
        return res.rows[0].enqueue_seq
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined)
        throw e
      }
    },
  }
}

// Shared set-up for the maintenance tests: a migrated schema, topics with retention policies, rows written straight
// into the message table (any age, any size) with seqs taken from the ledger, and a run with a captured log.
import { beforeAll } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import type { MaintenanceConfig, PgQueueOptions } from '../../../src/config/types.js'
import { tablesFor, type Tables } from '../../../src/db/tables.js'
import { createLogger } from '../../../src/kafkajs/logger.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { runMaintenance, type CompletedMaintenance, type MaintenanceOptions } from '../../../src/maintenance/run.js'
import { findTopics, insertTopics } from '../../../src/store/topics.js'
import { uniqueName, useTestKafka, type TestKafka } from '../../helpers/kafka.js'

export interface TopicPolicy {
  partitions?: number
  retentionSeconds?: number
  maxRows?: number
  maxBytes?: number
  aggressive?: boolean
}

export interface RowSpec {
  /** how old the rows are (the first is the oldest, 1 ms apart); default 0 */
  ageSeconds?: number
  /** payload bytes per row, or one size per row */
  bytes?: number | number[]
}

export interface CapturedLine {
  level: string
  message: string
  extra: Record<string, unknown>
}

export interface MaintenanceFixture extends TestKafka {
  tables: Tables
  maintenance: MaintenanceConfig
  /** log lines of every run made through run() */
  lines: CapturedLine[]
  logger: ReturnType<typeof createLogger>
  /** a topic with these retention settings (uniquely named) */
  retentionTopic(policy?: TopicPolicy): Promise<{ id: string; name: string }>
  insertRows(topicId: string, partition: number, count: number, spec?: RowSpec): Promise<void>
  /** stored seqs of one partition, ascending */
  seqs(topicId: string, partition?: number): Promise<number[]>
  sql<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>
  /** a completed run (fails the test when skipped or with step errors) */
  run(opts?: MaintenanceOptions, maintenance?: Partial<MaintenanceConfig>): Promise<CompletedMaintenance>
  /** schema-qualified function of migrations/R__maintenance_*.sql / R__partition_functions.sql */
  fn(name: string): string
}

export function useMaintenanceFixture(label: string, options: PgQueueOptions = {}): MaintenanceFixture {
  const t = useTestKafka(label, options)
  const tables = tablesFor(t.db.schema, 'metadata_queue')
  const maintenance = resolveConfig({ ...t.db.options, ...options }).maintenance
  const lines: CapturedLine[] = []
  const logger = createLogger({
    level: logLevel.DEBUG,
    logCreator:
      () =>
      ({ label, log }) => {
        const { message, timestamp: _ts, logger: _l, ...extra } = log as { message: string; timestamp: string; logger: string }
        lines.push({ level: label, message, extra })
      },
  })
  // the first client migrates the schema and premakes partitions
  beforeAll(async () => {
    await t.producer()
  })
  const sql = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.db.pool.query<R>(text, values)).rows
  const fn = (name: string) => `"${tables.schema}"."${tables.prefix}_${name}"`

  return {
    ...t,
    tables,
    maintenance,
    lines,
    logger,
    sql,
    fn,
    async retentionTopic(policy = {}) {
      const name = uniqueName('topic')
      await insertTopics(t.db.pool, tables, [
        {
          name,
          partitionCount: policy.partitions ?? 1,
          retentionMaxAgeSeconds: policy.retentionSeconds ?? 0,
          maxRowsPerTopic: policy.maxRows ?? 0,
          maxTotalPayloadBytes: policy.maxBytes ?? 0,
          aggressiveRetention: policy.aggressive ?? false,
          config: {},
        },
      ])
      const [row] = await findTopics(t.db.pool, tables, [name])
      return { id: row.id, name }
    },
    async insertRows(topicId, partition, count, spec = {}) {
      const age = spec.ageSeconds ?? 0
      const sizes = Array.isArray(spec.bytes) ? spec.bytes : Array.from({ length: count }, () => spec.bytes ?? 10)
      // the partition covering these timestamps may be in the past: create it (and the next ones) first
      await sql(`SELECT ${fn('ensure_partitions')}(now() - $1 * interval '1 second')`, [age])
      await sql(
        `WITH s AS (
           UPDATE ${tables.partitionSeq} SET next_seq = next_seq + $3 WHERE topic_id = $1 AND partition_id = $2
           RETURNING next_seq - $3 AS first_seq
         )
         INSERT INTO ${tables.message} (topic_id, partition_id, routing_key, enqueue_seq, payload, enqueued_at)
         SELECT $1, $2, 'k' || g.i, s.first_seq + g.i - 1, decode(repeat('78', ($5::int[])[g.i]), 'hex'),
                now() - $4 * interval '1 second' + g.i * interval '1 millisecond'
         FROM s, generate_series(1, $3) AS g(i)`,
        [topicId, partition, count, age, sizes],
      )
    },
    async seqs(topicId, partition = 0) {
      const rows = await sql<{ seq: string }>(
        `SELECT enqueue_seq::text AS seq FROM ${tables.message} WHERE topic_id = $1 AND partition_id = $2 ORDER BY enqueue_seq`,
        [topicId, partition],
      )
      return rows.map((r) => Number(r.seq))
    },
    async run(opts = {}, overrides = {}) {
      const report = await runMaintenance(
        { pool: t.db.pool, tables, maintenance: { ...maintenance, ...overrides }, logger },
        { vacuum: false, ...opts },
      )
      if (report.skipped) throw new Error('maintenance run was skipped')
      if (report.errors.length > 0) throw new Error(`maintenance errors: ${JSON.stringify(report.errors)}`)
      return report
    },
  }
}

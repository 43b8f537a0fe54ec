// DataHub's defaults (application.yaml / PostgresSqlSetupProperties), in the units of PgQueueConfig,
// plus the defaults of this library's own additions.
import path from 'node:path'
import { parsePriorityBands } from './priorityBands.js'
import type { PartitionInterval, PgQueueConfig } from './types.js'

export const DEFAULT_PRIORITY_BANDS_JSON = '[{"range":[0,3],"weight":70},{"range":[4,6],"weight":20},{"range":[7,9],"weight":10}]'

export const PARTITION_INTERVALS: readonly PartitionInterval[] = ['1 hour', '6 hours', '12 hours', '1 day', '1 week', '1 month']

/** Kafka's broker default message.max.bytes. */
export const KAFKA_MESSAGE_MAX_BYTES = 1048588

/** Everything except the connection (found by resolveConfig) and the embedded data dir (relative to cwd). */
export const DEFAULTS = {
  transport: 'kafka',
  enabled: false,
  schema: 'queue',
  tablePrefix: 'metadata_queue',
  pool: {
    min: 1,
    max: 8,
    idleTimeoutMillis: 120 * 1000,
    maxLifetimeSeconds: 120 * 60,
    // DataHub's 1000 ms is short for a Node pool under test load; kept for parity, override via options or env.
    connectionTimeoutMillis: 1000,
    leakTimeMinutes: 15,
    // no call of ours may wait forever: a statement is cancelled after a minute, a lock wait after 10 s (both retriable)
    statementTimeoutMillis: 60 * 1000,
    lockTimeoutMillis: 10 * 1000,
  },
  topicDefaults: {
    partitionCount: 2,
    visibilityTimeoutSeconds: 600,
    retentionMaxAgeSeconds: 604800,
    maxRowsPerTopic: 0,
    maxTotalPayloadBytes: 0,
    consumerConcurrency: 1,
    aggressiveRetention: false,
    contentTypeMime: 'application/avro',
  },
  priorityBands: parsePriorityBands(DEFAULT_PRIORITY_BANDS_JSON, 'DEFAULT_PRIORITY_BANDS_JSON'),
  payloadCompression: 'SNAPPY',
  partitioning: { interval: '1 day', premake: 4 },
  maintenance: {
    enabled: true,
    cronEnabled: false,
    intervalSeconds: 3600,
    batchDeleteLimit: 5000,
    registrationExpirySeconds: 604800,
  },
  consumerPoll: { emptyPollSleepMs: 100, missingTopicSleepMs: 500, errorRecoverySleepMs: 1000, maxBatchMessages: 500 },
  listen: true,
  maxMessageBytes: KAFKA_MESSAGE_MAX_BYTES,
  embedded: { port: 0 },
} as const satisfies Omit<PgQueueConfig, 'connection' | 'embedded'> & { embedded: { port: number } }

export function defaultEmbeddedDataDir(cwd: string = process.cwd()): string {
  return path.resolve(cwd, '.pgdata')
}

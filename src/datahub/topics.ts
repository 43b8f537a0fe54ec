// DataHub's topic catalogue (application.yaml kafka.topics + the pgQueue overrides): the topics a DataHub
// deployment needs before its producers and consumers start, with DataHub's partition counts and retention.
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { openBackend, type RegistryBackend } from '../registry/backend.js'
import type { Kafka } from '../kafka.js'
import { DATAHUB_TOPIC_CONTENT_TYPE } from './routing.js'
import type { CatalogueRow, SeededTopic } from '../store/datahubTopics.js'
import { storeFor } from '../store/handle.js'

export type { SeededTopic }

export const DATAHUB_TOPICS = {
  metadataChangeProposal: 'MetadataChangeProposal_v1',
  metadataChangeLogVersioned: 'MetadataChangeLog_Versioned_v1',
  metadataChangeLogTimeseries: 'MetadataChangeLog_Timeseries_v1',
  platformEvent: 'PlatformEvent_v1',
  dataHubUpgradeHistory: 'DataHubUpgradeHistory_v1',
  failedMetadataChangeProposal: 'FailedMetadataChangeProposal_v1',
  dataHubUsageEvent: 'DataHubUsageEvent_v1',
} as const

export type DataHubTopicSettings = Omit<CatalogueRow, 'name'>

const WEEK = 604_800 // DATAHUB_PGQUEUE_RETENTION_MAX_AGE_SECONDS
const T = DATAHUB_TOPICS

/** Per-topic differences from the defaults, as DataHub's configuration sets them. */
const SPECIFIC: Record<string, Partial<DataHubTopicSettings>> = {
  [T.metadataChangeProposal]: { aggressiveRetention: true },
  [T.metadataChangeLogVersioned]: { aggressiveRetention: true },
  // retention.ms 7776000000 (90 days) in kafka.topics
  [T.metadataChangeLogTimeseries]: { aggressiveRetention: true, retentionMaxAgeSeconds: 7_776_000 },
  // retention.ms -1 -> 0 (keep forever), capped by rows instead
  [T.dataHubUpgradeHistory]: { retentionMaxAgeSeconds: 0, maxRowsPerTopic: 10 },
  [T.failedMetadataChangeProposal]: { maxRowsPerTopic: 100 },
}

export interface DataHubSeedOptions {
  /** partitions of every topic (DataHub's `${PARTITIONS:1}`), default 1 */
  partitions?: number
  /** age retention of topics without their own (DATAHUB_PGQUEUE_RETENTION_MAX_AGE_SECONDS), default 604800 */
  retentionMaxAgeSeconds?: number
  /** DATAHUB_ANALYTICS_ENABLED: seed DataHubUsageEvent_v1, default true */
  analyticsEnabled?: boolean
  /** the topics' default content type, default application/avro */
  contentTypeMime?: string
  /** per-topic settings by name (other names add topics); `false` leaves a topic out */
  topics?: Record<string, Partial<DataHubTopicSettings> | false>
}

/** The catalogue rows the options describe, validated. */
export function dataHubCatalogue(options: DataHubSeedOptions = {}): CatalogueRow[] {
  const names: string[] = Object.values(DATAHUB_TOPICS).filter((n) => n !== T.dataHubUsageEvent || options.analyticsEnabled !== false)
  // topics named in `topics` beyond the catalogue (e.g. WorkEvent_v1) are added with the defaults
  for (const name of Object.keys(options.topics ?? {})) if (!names.includes(name)) names.push(name)
  const base: DataHubTopicSettings = {
    partitionCount: options.partitions ?? 1,
    retentionMaxAgeSeconds: options.retentionMaxAgeSeconds ?? WEEK,
    maxRowsPerTopic: 0,
    maxTotalPayloadBytes: 0,
    aggressiveRetention: false,
  }
  const rows: CatalogueRow[] = []
  for (const name of names) {
    const override = options.topics?.[name]
    if (override === false) continue
    rows.push(validate({ name, ...base, ...SPECIFIC[name], ...override }))
  }
  return rows
}

function validate(row: CatalogueRow): CatalogueRow {
  const bad = (what: string, value: unknown) => new KafkaJSNonRetriableError(`DataHub topic ${row.name}: invalid ${what} ${JSON.stringify(value)}`)
  if (!Number.isInteger(row.partitionCount) || row.partitionCount < 1 || row.partitionCount > 4096) {
    throw bad('partition count', row.partitionCount)
  }
  if (!Number.isInteger(row.retentionMaxAgeSeconds) || row.retentionMaxAgeSeconds < 0 || row.retentionMaxAgeSeconds > 2_147_483_647) {
    throw bad('retentionMaxAgeSeconds', row.retentionMaxAgeSeconds)
  }
  if (!Number.isSafeInteger(row.maxRowsPerTopic) || row.maxRowsPerTopic < 0) throw bad('maxRowsPerTopic', row.maxRowsPerTopic)
  if (!Number.isSafeInteger(row.maxTotalPayloadBytes) || row.maxTotalPayloadBytes < 0) {
    throw bad('maxTotalPayloadBytes', row.maxTotalPayloadBytes)
  }
  return row
}

/**
 * Creates (or brings up to date) DataHub's topics in the pgQueue catalogue. Idempotent: partition counts only
 * grow; the other columns take the given values, as DataHub's own setup does.
 */
export async function seedDataHubTopics(target: Kafka | RegistryBackend, options: DataHubSeedOptions = {}): Promise<SeededTopic[]> {
  const rows = dataHubCatalogue(options)
  const backend = await openBackend('pool' in target || 'kafka' in target ? target : { kafka: target })
  try {
    const store = storeFor(backend).datahubTopics
    const mime = await store.contentTypeId(options.contentTypeMime ?? DATAHUB_TOPIC_CONTENT_TYPE)
    return await store.upsertCatalogue(rows, mime)
  } finally {
    await backend.release()
  }
}

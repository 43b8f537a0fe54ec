import type { ConnectionOptions } from 'node:tls'

/** Which backend `createKafka` builds (DATAHUB_MESSAGING_TRANSPORT). */
export type Transport = 'kafka' | 'pgqueue'

/** One weighted-fair-queuing band: inclusive priority range and a positive weight. */
export interface PriorityBand {
  range: [number, number]
  weight: number
}

export type PayloadCompression = 'NONE' | 'SNAPPY'

/** Partition widths DataHub allows for the time-partitioned message table. */
export type PartitionInterval = '1 hour' | '6 hours' | '12 hours' | '1 day' | '1 week' | '1 month'

/** Where the connection settings came from, in precedence order. */
export type ConnectionSource = 'option' | 'datasource-url' | 'database-url' | 'pg-env' | 'embedded'

/** libpq's target_session_attrs values a writing client can use. */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary'

/** One entry of a libpq-style host list (no port: pg's default, PGPORT or 5432). */
export interface ConnectionHost {
  host: string
  port?: number
}

export interface ConnectionConfig {
  source: ConnectionSource
  /**
   * postgres:// URL (a jdbc:postgresql:// URL is converted). Absent for 'pg-env' (pg reads PG* itself) and 'embedded'.
   * With a host list it names the first host only; `hosts` has them all.
   */
  connectionString?: string
  /** a libpq-style host list (`postgres://h1,h2/db`, or one host with target_session_attrs): each new connection picks one */
  hosts?: ConnectionHost[]
  /** which host of `hosts` may serve (libpq's target_session_attrs; default any) */
  targetSessionAttrs?: TargetSessionAttrs
  user?: string
  password?: string
  ssl?: boolean | ConnectionOptions
}

export interface PoolConfig {
  min: number
  max: number
  /** DATAHUB_PGQUEUE_MAX_INACTIVE_TIME_SECONDS * 1000 */
  idleTimeoutMillis: number
  /** DATAHUB_PGQUEUE_MAX_AGE_MINUTES * 60 */
  maxLifetimeSeconds: number
  /** DATAHUB_PGQUEUE_WAIT_TIMEOUT_MILLIS: how long a caller waits for a pooled connection */
  connectionTimeoutMillis: number
  /** DATAHUB_PGQUEUE_LEAK_TIME_MINUTES: a checked-out client held longer is logged as a leak */
  leakTimeMinutes: number
  /** statement_timeout for pooled sessions, 0 = off (DATAHUB_PGQUEUE_STATEMENT_TIMEOUT_MS) */
  statementTimeoutMillis: number
  /** lock_timeout for pooled sessions, 0 = off (DATAHUB_PGQUEUE_LOCK_TIMEOUT_MS) */
  lockTimeoutMillis: number
}

export interface TopicDefaults {
  partitionCount: number
  visibilityTimeoutSeconds: number
  retentionMaxAgeSeconds: number
  maxRowsPerTopic: number
  maxTotalPayloadBytes: number
  consumerConcurrency: number
  aggressiveRetention: boolean
  contentTypeMime: string
}

export interface PartitioningConfig {
  interval: PartitionInterval
  premake: number
}

export interface MaintenanceConfig {
  /** run maintenance inside the app (one runner at a time across processes) */
  enabled: boolean
  cronEnabled: boolean
  intervalSeconds: number
  batchDeleteLimit: number
  /** registrations and group members silent this long are expired (0 = never) */
  registrationExpirySeconds: number
}

export interface ConsumerPollConfig {
  emptyPollSleepMs: number
  missingTopicSleepMs: number
  errorRecoverySleepMs: number
  /** most messages one fetch takes from one partition */
  maxBatchMessages: number
}

export interface EmbeddedConfig {
  /** data directory of the embedded server (git-ignored) */
  dataDir: string
  /** 0 = pick a free port */
  port: number
}

/** The one validated configuration object every module reads. */
export interface PgQueueConfig {
  transport: Transport
  /** DATAHUB_PGQUEUE_ENABLED: create / upgrade the schema on connect */
  enabled: boolean
  schema: string
  tablePrefix: string
  connection: ConnectionConfig
  pool: PoolConfig
  topicDefaults: TopicDefaults
  priorityBands: PriorityBand[]
  payloadCompression: PayloadCompression
  partitioning: PartitioningConfig
  maintenance: MaintenanceConfig
  consumerPoll: ConsumerPollConfig
  /** LISTEN/NOTIFY wake-ups; turn off behind pgbouncer transaction pooling */
  listen: boolean
  /** largest accepted message (key + value + headers), bytes */
  maxMessageBytes: number
  embedded: EmbeddedConfig
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] }

/** Constructor options: any part of the config; wins over the environment. */
export type PgQueueOptions = DeepPartial<Omit<PgQueueConfig, 'connection'>> & {
  connection?: Partial<Omit<ConnectionConfig, 'source'>>
  /** shorthand for connection.connectionString */
  connectionString?: string
}

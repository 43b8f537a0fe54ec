// Builds the one validated, deeply frozen PgQueueConfig: DataHub defaults < environment < constructor options.
import path from 'node:path'
import { validateSqlName } from './sqlNames.js'
import { resolveConnection } from './connection.js'
import { DEFAULTS, PARTITION_INTERVALS, defaultEmbeddedDataDir } from './defaults.js'
import { bool, int, invalid, mimeType, nonEmptyString, oneOf, scaled, type Parser } from './env.js'
import { parsePriorityBands } from './priorityBands.js'
import type { PgQueueConfig, PgQueueOptions, PriorityBand, Transport } from './types.js'

export const TRANSPORT_VARIABLE = 'DATAHUB_MESSAGING_TRANSPORT'
const P = 'DATAHUB_PGQUEUE_'

/** setTimeout's ceiling; also Postgres's int4 ceiling for statement_timeout. */
const MAX_MS = 2_147_483_647
const MAX_SAFE = Number.MAX_SAFE_INTEGER

const transportParser = oneOf<Transport>(['kafka', 'pgqueue'])

/** DATAHUB_MESSAGING_TRANSPORT alone, so the factory can pick Kafka without validating pgQueue settings. */
export function resolveTransport(option?: unknown, env: NodeJS.ProcessEnv = process.env): Transport {
  if (option !== undefined) return transportParser(option, 'options.transport')
  const raw = env[TRANSPORT_VARIABLE]
  return raw === undefined ? DEFAULTS.transport : transportParser(raw, TRANSPORT_VARIABLE)
}

type Source = { value: unknown; where: string } | undefined

/** The winning raw value and where it came from: option first, then the variable; undefined means default. */
function source(option: unknown, optionPath: string, env: NodeJS.ProcessEnv, variable: string): Source {
  if (option !== undefined) return { value: option, where: `options.${optionPath}` }
  const raw = env[variable]
  return raw === undefined ? undefined : { value: raw, where: variable }
}

function deepFreeze<T>(value: T): T {
  // Only plain objects and arrays: ssl options may hold Buffers, which cannot be frozen.
  if (Array.isArray(value) || (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype)) {
    for (const child of Object.values(value as object)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

export function resolveConfig(options: PgQueueOptions = {}, env: NodeJS.ProcessEnv = process.env): PgQueueConfig {
  if (typeof options !== 'object' || options === null) invalid('options', options, 'an object')
  const o = options
  const pick = <T>(option: unknown, optionPath: string, variable: string, fallback: T, parse: Parser<T>, envParse: Parser<T> = parse): T => {
    const found = source(option, optionPath, env, P + variable)
    if (found === undefined) return fallback
    return (found.where === P + variable ? envParse : parse)(found.value, found.where)
  }
  const D = DEFAULTS

  const pool = {
    min: pick(o.pool?.min, 'pool.min', 'MIN_CONNECTIONS', D.pool.min, int({ min: 0 })),
    max: pick(o.pool?.max, 'pool.max', 'MAX_CONNECTIONS', D.pool.max, int({ min: 1 })),
    idleTimeoutMillis: pick(
      o.pool?.idleTimeoutMillis,
      'pool.idleTimeoutMillis',
      'MAX_INACTIVE_TIME_SECONDS',
      D.pool.idleTimeoutMillis,
      int({ min: 0, max: MAX_MS, note: '0 = never' }),
      scaled(int({ min: 0, max: Math.floor(MAX_MS / 1000), note: '0 = never' }), 1000),
    ),
    maxLifetimeSeconds: pick(
      o.pool?.maxLifetimeSeconds,
      'pool.maxLifetimeSeconds',
      'MAX_AGE_MINUTES',
      D.pool.maxLifetimeSeconds,
      int({ min: 0, note: '0 = unlimited' }),
      scaled(int({ min: 0, max: 1_000_000_000, note: '0 = unlimited' }), 60),
    ),
    connectionTimeoutMillis: pick(
      o.pool?.connectionTimeoutMillis,
      'pool.connectionTimeoutMillis',
      'WAIT_TIMEOUT_MILLIS',
      D.pool.connectionTimeoutMillis,
      int({ min: 0, max: MAX_MS, note: '0 = wait forever' }),
    ),
    leakTimeMinutes: pick(
      o.pool?.leakTimeMinutes,
      'pool.leakTimeMinutes',
      'LEAK_TIME_MINUTES',
      D.pool.leakTimeMinutes,
      int({ min: 0, note: '0 = no leak warnings' }),
    ),
    statementTimeoutMillis: pick(
      o.pool?.statementTimeoutMillis,
      'pool.statementTimeoutMillis',
      'STATEMENT_TIMEOUT_MS',
      D.pool.statementTimeoutMillis,
      int({ min: 0, max: MAX_MS, note: '0 = off' }),
    ),
    lockTimeoutMillis: pick(
      o.pool?.lockTimeoutMillis,
      'pool.lockTimeoutMillis',
      'LOCK_TIMEOUT_MS',
      D.pool.lockTimeoutMillis,
      int({ min: 0, max: MAX_MS, note: '0 = off' }),
    ),
  }
  if (pool.min > pool.max) {
    const minWhere = source(o.pool?.min, 'pool.min', env, `${P}MIN_CONNECTIONS`)?.where ?? `${P}MIN_CONNECTIONS`
    const maxWhere = source(o.pool?.max, 'pool.max', env, `${P}MAX_CONNECTIONS`)?.where ?? `${P}MAX_CONNECTIONS`
    invalid(minWhere, pool.min, `a value <= ${maxWhere} (${pool.max})`)
  }

  const t = o.topicDefaults
  const topicDefaults = {
    partitionCount: pick(
      t?.partitionCount,
      'topicDefaults.partitionCount',
      'TOPIC_DEFAULT_PARTITION_COUNT',
      D.topicDefaults.partitionCount,
      int({ min: 1, max: 4096 }),
    ),
    visibilityTimeoutSeconds: pick(
      t?.visibilityTimeoutSeconds,
      'topicDefaults.visibilityTimeoutSeconds',
      'TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS',
      D.topicDefaults.visibilityTimeoutSeconds,
      int({ min: 1, max: 604800 }),
    ),
    retentionMaxAgeSeconds: pick(
      t?.retentionMaxAgeSeconds,
      'topicDefaults.retentionMaxAgeSeconds',
      'RETENTION_MAX_AGE_SECONDS',
      D.topicDefaults.retentionMaxAgeSeconds,
      retentionAge,
    ),
    maxRowsPerTopic: pick(
      t?.maxRowsPerTopic,
      'topicDefaults.maxRowsPerTopic',
      'TOPIC_DEFAULT_MAX_ROWS_PER_TOPIC',
      D.topicDefaults.maxRowsPerTopic,
      int({ min: 0, max: MAX_SAFE, note: '0 = unlimited' }),
    ),
    maxTotalPayloadBytes: pick(
      t?.maxTotalPayloadBytes,
      'topicDefaults.maxTotalPayloadBytes',
      'TOPIC_DEFAULT_MAX_TOTAL_PAYLOAD_BYTES',
      D.topicDefaults.maxTotalPayloadBytes,
      int({ min: 0, max: MAX_SAFE, note: '0 = unlimited' }),
    ),
    // DataHub treats 0 as 1.
    consumerConcurrency: Math.max(
      1,
      pick(
        t?.consumerConcurrency,
        'topicDefaults.consumerConcurrency',
        'TOPIC_DEFAULT_CONSUMER_CONCURRENCY',
        D.topicDefaults.consumerConcurrency,
        int({ min: 0, max: 64, note: '0 means 1' }),
      ),
    ),
    aggressiveRetention: pick(
      t?.aggressiveRetention,
      'topicDefaults.aggressiveRetention',
      'TOPIC_DEFAULT_AGGRESSIVE_RETENTION',
      D.topicDefaults.aggressiveRetention,
      bool,
    ),
    contentTypeMime: pick(
      t?.contentTypeMime,
      'topicDefaults.contentTypeMime',
      'TOPIC_DEFAULT_CONTENT_TYPE_MIME',
      D.topicDefaults.contentTypeMime,
      mimeType,
    ),
  }

  const bandsParser: Parser<PriorityBand[]> = (raw, where) => parsePriorityBands(raw as string | PriorityBand[], where)
  const config: PgQueueConfig = {
    transport: resolveTransport(o.transport, env),
    enabled: pick(o.enabled, 'enabled', 'ENABLED', D.enabled, bool),
    schema: pick(o.schema, 'schema', 'SCHEMA', D.schema, (raw, where) => validateSqlName('schema', raw as string, where)),
    tablePrefix: pick(o.tablePrefix, 'tablePrefix', 'TABLE_PREFIX', D.tablePrefix, (raw, where) =>
      validateSqlName('table prefix', raw as string, where),
    ),
    connection: resolveConnection(o, env),
    pool,
    topicDefaults,
    priorityBands: pick(o.priorityBands, 'priorityBands', 'PRIORITY_BANDS', D.priorityBands.map(copyBand), bandsParser),
    payloadCompression: pick(
      o.payloadCompression,
      'payloadCompression',
      'PAYLOAD_COMPRESSION',
      D.payloadCompression,
      oneOf(['SNAPPY', 'NONE'] as const),
    ),
    partitioning: {
      interval: pick(
        o.partitioning?.interval,
        'partitioning.interval',
        'RETENTION_PARTMAN_INTERVAL',
        D.partitioning.interval,
        oneOf(PARTITION_INTERVALS),
      ),
      premake: pick(o.partitioning?.premake, 'partitioning.premake', 'RETENTION_PARTMAN_PREMAKE', D.partitioning.premake, int({ min: 1, max: 128 })),
    },
    maintenance: {
      enabled: pick(o.maintenance?.enabled, 'maintenance.enabled', 'MAINTENANCE_ENABLED', D.maintenance.enabled, bool),
      cronEnabled: pick(o.maintenance?.cronEnabled, 'maintenance.cronEnabled', 'MAINTENANCE_CRON_ENABLED', D.maintenance.cronEnabled, bool),
      intervalSeconds: pick(
        o.maintenance?.intervalSeconds,
        'maintenance.intervalSeconds',
        'MAINTENANCE_INTERVAL_SECONDS',
        D.maintenance.intervalSeconds,
        int({ min: 60, max: 2592000 }),
      ),
      batchDeleteLimit: pick(
        o.maintenance?.batchDeleteLimit,
        'maintenance.batchDeleteLimit',
        'MAINTENANCE_BATCH_DELETE_LIMIT',
        D.maintenance.batchDeleteLimit,
        int({ min: 1, max: 100000 }),
      ),
      registrationExpirySeconds: pick(
        o.maintenance?.registrationExpirySeconds,
        'maintenance.registrationExpirySeconds',
        'REGISTRATION_EXPIRY_SECONDS',
        D.maintenance.registrationExpirySeconds,
        int({ min: 0, max: MAX_SAFE, note: '0 = never' }),
      ),
    },
    consumerPoll: {
      emptyPollSleepMs: pick(
        o.consumerPoll?.emptyPollSleepMs,
        'consumerPoll.emptyPollSleepMs',
        'EMPTY_POLL_SLEEP_MS',
        D.consumerPoll.emptyPollSleepMs,
        int({ min: 0, max: MAX_MS }),
      ),
      missingTopicSleepMs: pick(
        o.consumerPoll?.missingTopicSleepMs,
        'consumerPoll.missingTopicSleepMs',
        'MISSING_TOPIC_SLEEP_MS',
        D.consumerPoll.missingTopicSleepMs,
        int({ min: 0, max: MAX_MS }),
      ),
      errorRecoverySleepMs: pick(
        o.consumerPoll?.errorRecoverySleepMs,
        'consumerPoll.errorRecoverySleepMs',
        'ERROR_RECOVERY_SLEEP_MS',
        D.consumerPoll.errorRecoverySleepMs,
        int({ min: 0, max: MAX_MS }),
      ),
      maxBatchMessages: pick(
        o.consumerPoll?.maxBatchMessages,
        'consumerPoll.maxBatchMessages',
        'CONSUMER_MAX_BATCH',
        D.consumerPoll.maxBatchMessages,
        int({ min: 1, max: 100000 }),
      ),
    },
    listen: pick(o.listen, 'listen', 'LISTEN_ENABLED', D.listen, bool),
    maxMessageBytes: pick(
      o.maxMessageBytes,
      'maxMessageBytes',
      'MAX_MESSAGE_BYTES',
      D.maxMessageBytes,
      int({ min: 1, max: 1073741823, note: 'PostgreSQL bytea holds < 1 GiB' }),
    ),
    embedded: {
      dataDir: pick(o.embedded?.dataDir, 'embedded.dataDir', 'EMBEDDED_DATA_DIR', defaultEmbeddedDataDir(), (raw, where) =>
        path.resolve(nonEmptyString(raw, where)),
      ),
      port: pick(o.embedded?.port, 'embedded.port', 'EMBEDDED_PORT', D.embedded.port, int({ min: 0, max: 65535, note: '0 = pick a free port' })),
    },
  }
  return deepFreeze(config)
}

const retentionInt = int({ min: 0, max: MAX_SAFE, note: '0 = no age limit, otherwise >= 60' })
/** DataHub: 0 (no age limit) or at least 60 seconds. */
const retentionAge: Parser<number> = (raw, where) => {
  const value = retentionInt(raw, where)
  if (value !== 0 && value < 60) invalid(where, raw, 'an integer: 0 (no age limit) or >= 60 seconds')
  return value
}

function copyBand(band: PriorityBand): PriorityBand {
  return { range: [band.range[0], band.range[1]], weight: band.weight }
}

import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { resolveConfig, resolveTransport } from '../../../src/config/resolve.js'
import type { PgQueueOptions } from '../../../src/config/types.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'

const P = 'DATAHUB_PGQUEUE_'

/** Asserts a KafkaJSNonRetriableError naming `where` and showing `shown`; returns the message. */
function expectConfigError(run: () => unknown, where: string, shown: string): string {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expect(caught, `expected ${where} to be rejected`).toBeInstanceOf(KafkaJSNonRetriableError)
  const message = (caught as Error).message
  expect(message).toContain(where)
  expect(message).toContain(shown)
  expect(message).toMatch(/expected /)
  return message
}

const envError = (name: string, value: string) => expectConfigError(() => resolveConfig({}, { [name]: value }), name, JSON.stringify(value))

describe('defaults', () => {
  it('equal DataHub defaults (section 8) plus ours', () => {
    const c = resolveConfig({}, {})
    expect(c.transport).toBe('kafka')
    expect(c.enabled).toBe(false)
    expect(c.schema).toBe('queue')
    expect(c.tablePrefix).toBe('metadata_queue')
    expect(c.payloadCompression).toBe('SNAPPY')
    expect(c.topicDefaults).toEqual({
      partitionCount: 2,
      visibilityTimeoutSeconds: 600,
      retentionMaxAgeSeconds: 604800,
      maxRowsPerTopic: 0,
      maxTotalPayloadBytes: 0,
      consumerConcurrency: 1,
      aggressiveRetention: false,
      contentTypeMime: 'application/avro',
    })
    expect(c.priorityBands).toEqual([
      { range: [0, 3], weight: 70 },
      { range: [4, 6], weight: 20 },
      { range: [7, 9], weight: 10 },
    ])
    expect(c.partitioning).toEqual({ interval: '1 day', premake: 4 })
    expect(c.maintenance).toEqual({
      enabled: true,
      cronEnabled: false,
      intervalSeconds: 3600,
      batchDeleteLimit: 5000,
      registrationExpirySeconds: 604800,
    })
    expect(c.pool).toEqual({
      min: 1,
      max: 8,
      idleTimeoutMillis: 120_000,
      maxLifetimeSeconds: 7200,
      connectionTimeoutMillis: 1000,
      leakTimeMinutes: 15,
      statementTimeoutMillis: 60_000,
      lockTimeoutMillis: 10_000,
    })
    expect(c.consumerPoll).toEqual({ emptyPollSleepMs: 100, missingTopicSleepMs: 500, errorRecoverySleepMs: 1000, maxBatchMessages: 500 })
    expect(c.listen).toBe(true)
    expect(c.maxMessageBytes).toBe(1048588)
    expect(c.embedded).toEqual({ dataDir: path.resolve(process.cwd(), '.pgdata'), port: 0 })
    expect(c.connection).toEqual({ source: 'embedded' })
  })

  it('returns a deeply frozen object, and a fresh one each call', () => {
    const a = resolveConfig({}, {})
    const b = resolveConfig({}, {})
    expect(Object.isFrozen(a)).toBe(true)
    expect(Object.isFrozen(a.pool)).toBe(true)
    expect(Object.isFrozen(a.priorityBands)).toBe(true)
    expect(Object.isFrozen(a.priorityBands[0]!.range)).toBe(true)
    expect(Object.isFrozen(a.connection)).toBe(true)
    expect(() => {
      ;(a.pool as { max: number }).max = 99
    }).toThrow(TypeError)
    expect(a.priorityBands).not.toBe(b.priorityBands)
  })

  it('does not freeze objects the caller passed in', () => {
    const ssl = { rejectUnauthorized: false }
    const c = resolveConfig({ connection: { ssl } }, {})
    expect(Object.isFrozen(ssl)).toBe(false)
    expect(c.connection.ssl).toEqual(ssl)
  })
})

describe('environment', () => {
  const env = {
    DATAHUB_MESSAGING_TRANSPORT: '  PgQueue ',
    [`${P}ENABLED`]: 'YES',
    [`${P}SCHEMA`]: 'Queue2',
    [`${P}TABLE_PREFIX`]: 'mq',
    [`${P}PAYLOAD_COMPRESSION`]: 'none',
    [`${P}TOPIC_DEFAULT_CONTENT_TYPE_MIME`]: 'application/json',
    [`${P}TOPIC_DEFAULT_PARTITION_COUNT`]: '4096',
    [`${P}TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS`]: '1',
    [`${P}PRIORITY_BANDS`]: '[{"range":[5,9],"weight":1},{"range":[0,4],"weight":3}]',
    [`${P}RETENTION_MAX_AGE_SECONDS`]: '60',
    [`${P}TOPIC_DEFAULT_MAX_ROWS_PER_TOPIC`]: '1000',
    [`${P}TOPIC_DEFAULT_MAX_TOTAL_PAYLOAD_BYTES`]: '10000000000',
    [`${P}TOPIC_DEFAULT_CONSUMER_CONCURRENCY`]: '0',
    [`${P}TOPIC_DEFAULT_AGGRESSIVE_RETENTION`]: '1',
    [`${P}RETENTION_PARTMAN_INTERVAL`]: '6 Hours',
    [`${P}RETENTION_PARTMAN_PREMAKE`]: '128',
    [`${P}MAINTENANCE_CRON_ENABLED`]: 'true',
    [`${P}MAINTENANCE_ENABLED`]: 'no',
    [`${P}MAINTENANCE_INTERVAL_SECONDS`]: '60',
    [`${P}MAINTENANCE_BATCH_DELETE_LIMIT`]: '100000',
    [`${P}REGISTRATION_EXPIRY_SECONDS`]: '0',
    [`${P}MIN_CONNECTIONS`]: '2',
    [`${P}MAX_CONNECTIONS`]: '2',
    [`${P}MAX_INACTIVE_TIME_SECONDS`]: '30',
    [`${P}MAX_AGE_MINUTES`]: '5',
    [`${P}LEAK_TIME_MINUTES`]: '0',
    [`${P}WAIT_TIMEOUT_MILLIS`]: '5000',
    [`${P}STATEMENT_TIMEOUT_MS`]: '30000',
    [`${P}LOCK_TIMEOUT_MS`]: '2500',
    [`${P}EMPTY_POLL_SLEEP_MS`]: '25',
    [`${P}MISSING_TOPIC_SLEEP_MS`]: '0',
    [`${P}ERROR_RECOVERY_SLEEP_MS`]: '2000',
    [`${P}CONSUMER_MAX_BATCH`]: '1',
    [`${P}LISTEN_ENABLED`]: 'False',
    [`${P}MAX_MESSAGE_BYTES`]: '2048',
    [`${P}EMBEDDED_DATA_DIR`]: 'tmp/pg',
    [`${P}EMBEDDED_PORT`]: '54329',
  }

  it('parses every variable', () => {
    const c = resolveConfig({}, env)
    expect(c.transport).toBe('pgqueue')
    expect(c.enabled).toBe(true)
    expect(c.schema).toBe('queue2')
    expect(c.tablePrefix).toBe('mq')
    expect(c.payloadCompression).toBe('NONE')
    expect(c.topicDefaults).toEqual({
      partitionCount: 4096,
      visibilityTimeoutSeconds: 1,
      retentionMaxAgeSeconds: 60,
      maxRowsPerTopic: 1000,
      maxTotalPayloadBytes: 10_000_000_000,
      consumerConcurrency: 1,
      aggressiveRetention: true,
      contentTypeMime: 'application/json',
    })
    expect(c.priorityBands).toEqual([
      { range: [0, 4], weight: 3 },
      { range: [5, 9], weight: 1 },
    ])
    expect(c.partitioning).toEqual({ interval: '6 hours', premake: 128 })
    expect(c.maintenance).toEqual({
      enabled: false,
      cronEnabled: true,
      intervalSeconds: 60,
      batchDeleteLimit: 100000,
      registrationExpirySeconds: 0,
    })
    expect(c.pool).toEqual({
      min: 2,
      max: 2,
      idleTimeoutMillis: 30_000,
      maxLifetimeSeconds: 300,
      connectionTimeoutMillis: 5000,
      leakTimeMinutes: 0,
      statementTimeoutMillis: 30000,
      lockTimeoutMillis: 2500,
    })
    expect(c.consumerPoll).toEqual({ emptyPollSleepMs: 25, missingTopicSleepMs: 0, errorRecoverySleepMs: 2000, maxBatchMessages: 1 })
    expect(c.listen).toBe(false)
    expect(c.maxMessageBytes).toBe(2048)
    expect(c.embedded).toEqual({ dataDir: path.resolve('tmp/pg'), port: 54329 })
  })

  it('keeps concurrency values above 0 as given', () => {
    expect(resolveConfig({}, { [`${P}TOPIC_DEFAULT_CONSUMER_CONCURRENCY`]: '64' }).topicDefaults.consumerConcurrency).toBe(64)
  })

  it.each(['true', 'TRUE', '1', 'yes', 'Yes'])('reads %s as true', (word) => {
    expect(resolveConfig({}, { [`${P}ENABLED`]: word }).enabled).toBe(true)
  })
  it.each(['false', 'FALSE', '0', 'no', 'NO'])('reads %s as false', (word) => {
    expect(resolveConfig({}, { [`${P}LISTEN_ENABLED`]: word }).listen).toBe(false)
  })

  it('accepts every partition interval on the allow-list', () => {
    for (const interval of ['1 hour', '6 hours', '12 hours', '1 day', '1 week', '1 month']) {
      expect(resolveConfig({}, { [`${P}RETENTION_PARTMAN_INTERVAL`]: interval }).partitioning.interval).toBe(interval)
    }
  })
})

describe('options win over the environment', () => {
  it('for every section', () => {
    const env = {
      DATAHUB_MESSAGING_TRANSPORT: 'kafka',
      [`${P}SCHEMA`]: 'envschema',
      [`${P}TOPIC_DEFAULT_PARTITION_COUNT`]: '3',
      [`${P}TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS`]: '30',
      [`${P}MAX_INACTIVE_TIME_SECONDS`]: '30',
      [`${P}PRIORITY_BANDS`]: '[{"range":[0,9],"weight":1}]',
      [`${P}LISTEN_ENABLED`]: 'true',
      [`${P}MAINTENANCE_ENABLED`]: 'true',
    }
    const options: PgQueueOptions = {
      transport: 'pgqueue',
      schema: 'optschema',
      topicDefaults: { partitionCount: 7 },
      pool: { idleTimeoutMillis: 1234 },
      priorityBands: [
        { range: [0, 1], weight: 1 },
        { range: [2, 9], weight: 1 },
      ],
      listen: false,
      maintenance: { enabled: false },
    }
    const c = resolveConfig(options, env)
    expect(c.transport).toBe('pgqueue')
    expect(c.schema).toBe('optschema')
    expect(c.topicDefaults.partitionCount).toBe(7)
    // env still fills what options leave out
    expect(c.topicDefaults.visibilityTimeoutSeconds).toBe(30)
    // option is in milliseconds, the variable in seconds
    expect(c.pool.idleTimeoutMillis).toBe(1234)
    expect(c.priorityBands).toHaveLength(2)
    expect(c.listen).toBe(false)
    expect(c.maintenance.enabled).toBe(false)
  })

  it('normalizes concurrency 0 from options too', () => {
    expect(resolveConfig({ topicDefaults: { consumerConcurrency: 0 } }, {}).topicDefaults.consumerConcurrency).toBe(1)
  })

  it('does not validate an overridden bad variable', () => {
    const c = resolveConfig({ topicDefaults: { partitionCount: 3 } }, { [`${P}TOPIC_DEFAULT_PARTITION_COUNT`]: 'junk' })
    expect(c.topicDefaults.partitionCount).toBe(3)
  })
})

describe('transport', () => {
  it('defaults to kafka and trims / folds case', () => {
    expect(resolveTransport(undefined, {})).toBe('kafka')
    expect(resolveTransport(undefined, { DATAHUB_MESSAGING_TRANSPORT: ' PGQUEUE\n' })).toBe('pgqueue')
    expect(resolveTransport(undefined, { DATAHUB_MESSAGING_TRANSPORT: 'Kafka' })).toBe('kafka')
  })

  it.each(['rabbitmq', '', 'pg queue', 'pgqueue2'])('rejects %j naming the variable', (value) => {
    const message = expectConfigError(
      () => resolveTransport(undefined, { DATAHUB_MESSAGING_TRANSPORT: value }),
      'DATAHUB_MESSAGING_TRANSPORT',
      JSON.stringify(value),
    )
    expect(message).toContain('kafka, pgqueue')
    expect(() => resolveConfig({}, { DATAHUB_MESSAGING_TRANSPORT: value })).toThrow(KafkaJSNonRetriableError)
  })

  it('rejects a bad options.transport', () => {
    expectConfigError(() => resolveConfig({ transport: 'redis' as never }, {}), 'options.transport', '"redis"')
  })
})

describe('validation of variables', () => {
  it.each([
    ['TOPIC_DEFAULT_PARTITION_COUNT', ['0', '4097', '-1', '2.5', '12abc', '', ' ', 'NaN', '1e3', '0x10', 'Infinity']],
    ['TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS', ['0', '604801', 'ten']],
    ['RETENTION_MAX_AGE_SECONDS', ['1', '59', '-60', '60.5']],
    ['TOPIC_DEFAULT_MAX_ROWS_PER_TOPIC', ['-1', '1.5', '99999999999999999999']],
    ['TOPIC_DEFAULT_MAX_TOTAL_PAYLOAD_BYTES', ['-1', 'lots']],
    ['TOPIC_DEFAULT_CONSUMER_CONCURRENCY', ['65', '-1', '1.0']],
    ['RETENTION_PARTMAN_PREMAKE', ['0', '129']],
    ['MAINTENANCE_INTERVAL_SECONDS', ['59', '2592001']],
    ['MAINTENANCE_BATCH_DELETE_LIMIT', ['0', '100001']],
    ['MIN_CONNECTIONS', ['-1', 'x']],
    ['MAX_CONNECTIONS', ['0', '']],
    ['MAX_INACTIVE_TIME_SECONDS', ['-5']],
    ['MAX_AGE_MINUTES', ['-1']],
    ['LEAK_TIME_MINUTES', ['15m']],
    ['WAIT_TIMEOUT_MILLIS', ['-1', '2147483648']],
    ['STATEMENT_TIMEOUT_MS', ['-1']],
    ['LOCK_TIMEOUT_MS', ['-1']],
    ['EMPTY_POLL_SLEEP_MS', ['-1', '0.5']],
    ['MISSING_TOPIC_SLEEP_MS', ['abc']],
    ['ERROR_RECOVERY_SLEEP_MS', ['']],
    ['CONSUMER_MAX_BATCH', ['0', '100001']],
    ['REGISTRATION_EXPIRY_SECONDS', ['-1']],
    ['MAX_MESSAGE_BYTES', ['0', '1073741824']],
    ['EMBEDDED_PORT', ['-1', '65536']],
  ])('%s rejects bad integers', (suffix, values) => {
    for (const value of values) {
      const message = envError(P + suffix, value)
      expect(message).toMatch(/an integer/)
    }
  })

  it.each(['ENABLED', 'TOPIC_DEFAULT_AGGRESSIVE_RETENTION', 'MAINTENANCE_CRON_ENABLED', 'MAINTENANCE_ENABLED', 'LISTEN_ENABLED'])(
    '%s rejects non-booleans',
    (suffix) => {
      for (const value of ['maybe', '', '2', 'on', 'y']) {
        expect(envError(P + suffix, value)).toContain('true, false, 1, 0, yes, no')
      }
    },
  )

  it('rejects unknown compression', () => {
    expect(envError(`${P}PAYLOAD_COMPRESSION`, 'gzip')).toContain('SNAPPY, NONE')
  })

  it('rejects partition intervals off the allow-list', () => {
    for (const value of ['2 days', '1 minute', '', '1day']) {
      expect(envError(`${P}RETENTION_PARTMAN_INTERVAL`, value)).toContain('1 hour, 6 hours, 12 hours, 1 day, 1 week, 1 month')
    }
  })

  it('rejects a malformed MIME type', () => {
    for (const value of ['', 'avro', 'application/ avro', 'a/b c']) envError(`${P}TOPIC_DEFAULT_CONTENT_TYPE_MIME`, value)
  })

  it('rejects an empty embedded data dir', () => {
    envError(`${P}EMBEDDED_DATA_DIR`, '')
  })

  it.each(['SCHEMA', 'TABLE_PREFIX'])('%s rejects SQL metacharacters and bad names', (suffix) => {
    for (const value of ['queue"; drop table x; --', "q'x", 'a b', '1queue', '', 'a-b', 'x'.repeat(64), 'q;']) {
      envError(P + suffix, value)
    }
  })

  it('rejects bad priority bands naming the variable', () => {
    for (const value of [
      'nope',
      '[{"range":[0,3],"weight":70},{"range":[5,9],"weight":30}]',
      '[{"range":[0,5],"weight":70},{"range":[5,9],"weight":30}]',
      '[{"range":[0,10],"weight":1}]',
      '[{"range":[0,9],"weight":0}]',
    ]) {
      envError(`${P}PRIORITY_BANDS`, value)
    }
  })

  it('rejects min connections above max, naming both', () => {
    const message = expectConfigError(() => resolveConfig({}, { [`${P}MIN_CONNECTIONS`]: '9' }), `${P}MIN_CONNECTIONS`, '9')
    expect(message).toContain(`${P}MAX_CONNECTIONS (8)`)
  })
})

describe('validation of options', () => {
  it.each([
    [{ topicDefaults: { partitionCount: 0 } }, 'options.topicDefaults.partitionCount', '0'],
    [{ topicDefaults: { partitionCount: 2.5 } }, 'options.topicDefaults.partitionCount', '2.5'],
    [{ topicDefaults: { partitionCount: NaN } }, 'options.topicDefaults.partitionCount', 'NaN'],
    [{ topicDefaults: { consumerConcurrency: 65 } }, 'options.topicDefaults.consumerConcurrency', '65'],
    [{ topicDefaults: { retentionMaxAgeSeconds: 30 } }, 'options.topicDefaults.retentionMaxAgeSeconds', '30'],
    [{ topicDefaults: { aggressiveRetention: 'sometimes' as never } }, 'options.topicDefaults.aggressiveRetention', '"sometimes"'],
    [{ pool: { max: 0 } }, 'options.pool.max', '0'],
    [{ pool: { min: 3, max: 2 } }, 'options.pool.min', '3'],
    [{ pool: { idleTimeoutMillis: -1 } }, 'options.pool.idleTimeoutMillis', '-1'],
    [{ schema: 'x"; drop schema public; --' }, 'options.schema', '"x\\"; drop schema public; --"'],
    [{ tablePrefix: 'bad prefix' }, 'options.tablePrefix', '"bad prefix"'],
    [{ payloadCompression: 'LZ4' as never }, 'options.payloadCompression', '"LZ4"'],
    [{ partitioning: { interval: '2 days' as never } }, 'options.partitioning.interval', '"2 days"'],
    [{ maintenance: { batchDeleteLimit: 0 } }, 'options.maintenance.batchDeleteLimit', '0'],
    [{ consumerPoll: { maxBatchMessages: 100001 } }, 'options.consumerPoll.maxBatchMessages', '100001'],
    [{ maxMessageBytes: -1 }, 'options.maxMessageBytes', '-1'],
    [{ embedded: { port: 70000 } }, 'options.embedded.port', '70000'],
    [{ priorityBands: [{ range: [0, 8], weight: 1 }] }, 'options.priorityBands', '"range":[0,8]'],
    [{ connection: { ssl: 'yes' as never } }, 'options.connection.ssl', '"yes"'],
    [{ connection: { user: 42 as never } }, 'options.connection.user', '42'],
  ] as [PgQueueOptions, string, string][])('rejects %j', (options, where, shown) => {
    expectConfigError(() => resolveConfig(options, {}), where, shown)
  })

  it('rejects a non-object', () => {
    expectConfigError(() => resolveConfig(null as never, {}), 'options', 'null')
  })
})

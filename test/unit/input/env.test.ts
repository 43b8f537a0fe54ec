// Invalid DATAHUB_PGQUEUE_* configuration is a startup error that names the variable and the value (and never echoes
// a secret). Every variable resolveConfig reads is covered with at least one bad value.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import { Kafka } from '../../../src/kafka.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { createKafka } from '../../../src/transport.js'

const P = 'DATAHUB_PGQUEUE_'

// [variable, bad value]
const BAD: Array<[string, string]> = [
  ['DATAHUB_MESSAGING_TRANSPORT', 'rabbitmq'],
  [`${P}ENABLED`, 'maybe'],
  [`${P}SCHEMA`, 'x"; DROP TABLE y; --'],
  [`${P}SCHEMA`, "o'neil"],
  [`${P}SCHEMA`, 'schéma'],
  [`${P}SCHEMA`, '1queue'],
  [`${P}SCHEMA`, 'q'.repeat(64)],
  [`${P}SCHEMA`, ''],
  [`${P}TABLE_PREFIX`, 'p'.repeat(41)],
  [`${P}TABLE_PREFIX`, 'metadata-queue'],
  [`${P}TABLE_PREFIX`, 'x;drop'],
  [`${P}MIN_CONNECTIONS`, '-1'],
  [`${P}MAX_CONNECTIONS`, '0'],
  [`${P}MAX_CONNECTIONS`, 'eight'],
  [`${P}MAX_CONNECTIONS`, '1.5'],
  [`${P}MAX_CONNECTIONS`, '1e3'],
  [`${P}MAX_CONNECTIONS`, ''],
  [`${P}MAX_INACTIVE_TIME_SECONDS`, 'soon'],
  [`${P}MAX_AGE_MINUTES`, '-5'],
  [`${P}WAIT_TIMEOUT_MILLIS`, 'NaN'],
  [`${P}LEAK_TIME_MINUTES`, '-1'],
  [`${P}STATEMENT_TIMEOUT_MS`, '-1'],
  [`${P}STATEMENT_TIMEOUT_MS`, '2147483648'],
  [`${P}STATEMENT_TIMEOUT_MS`, '10s'],
  [`${P}TOPIC_DEFAULT_PARTITION_COUNT`, '0'],
  [`${P}TOPIC_DEFAULT_PARTITION_COUNT`, '4097'],
  [`${P}TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS`, '0'],
  [`${P}TOPIC_DEFAULT_VISIBILITY_TIMEOUT_SECONDS`, '604801'],
  [`${P}RETENTION_MAX_AGE_SECONDS`, '30'],
  [`${P}TOPIC_DEFAULT_MAX_ROWS_PER_TOPIC`, '-1'],
  [`${P}TOPIC_DEFAULT_MAX_TOTAL_PAYLOAD_BYTES`, 'lots'],
  [`${P}TOPIC_DEFAULT_CONSUMER_CONCURRENCY`, '65'],
  [`${P}TOPIC_DEFAULT_AGGRESSIVE_RETENTION`, 'sometimes'],
  [`${P}TOPIC_DEFAULT_CONTENT_TYPE_MIME`, 'not a mime'],
  [`${P}PRIORITY_BANDS`, '[{"range":[0,3],"weight":70}]'],
  [`${P}PRIORITY_BANDS`, 'not json'],
  [`${P}PAYLOAD_COMPRESSION`, 'GZIP'],
  [`${P}RETENTION_PARTMAN_INTERVAL`, '2 days'],
  [`${P}RETENTION_PARTMAN_PREMAKE`, '0'],
  [`${P}RETENTION_PARTMAN_PREMAKE`, '129'],
  [`${P}MAINTENANCE_ENABLED`, 'on-ish'],
  [`${P}MAINTENANCE_CRON_ENABLED`, 'x'],
  [`${P}MAINTENANCE_INTERVAL_SECONDS`, '59'],
  [`${P}MAINTENANCE_BATCH_DELETE_LIMIT`, '0'],
  [`${P}MAINTENANCE_BATCH_DELETE_LIMIT`, '100001'],
  [`${P}REGISTRATION_EXPIRY_SECONDS`, '-1'],
  [`${P}EMPTY_POLL_SLEEP_MS`, '-1'],
  [`${P}MISSING_TOPIC_SLEEP_MS`, 'x'],
  [`${P}ERROR_RECOVERY_SLEEP_MS`, '1.5'],
  [`${P}CONSUMER_MAX_BATCH`, '0'],
  [`${P}LISTEN_ENABLED`, 'perhaps'],
  [`${P}MAX_MESSAGE_BYTES`, '0'],
  [`${P}MAX_MESSAGE_BYTES`, '1073741824'],
  [`${P}EMBEDDED_DATA_DIR`, '   '],
  [`${P}EMBEDDED_PORT`, '70000'],
  [`${P}DATASOURCE_URL`, 'mysql://u@h/db'],
  [`${P}DATASOURCE_URL`, 'not a url'],
  ['DATABASE_URL', 'http://example/db'],
]

function startupError(env: NodeJS.ProcessEnv): Error {
  try {
    resolveConfig({}, env)
  } catch (e) {
    return e as Error
  }
  throw new Error(`no error for ${JSON.stringify(env)}`)
}

describe('invalid environment configuration', () => {
  it.each(BAD)('%s=%j fails at startup naming the variable and the value', (variable, value) => {
    const err = startupError({ [variable]: value })
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toContain(variable)
    expect(err.message).toContain(JSON.stringify(value))
  })

  it('MIN_CONNECTIONS above MAX_CONNECTIONS names both', () => {
    const err = startupError({ [`${P}MIN_CONNECTIONS`]: '5', [`${P}MAX_CONNECTIONS`]: '2' })
    expect(err.message).toContain(`${P}MIN_CONNECTIONS`)
    expect(err.message).toContain(`${P}MAX_CONNECTIONS`)
  })

  it('new Kafka() and createKafka() throw at construction, before any connection', () => {
    vi.stubEnv(`${P}MAX_CONNECTIONS`, 'zero')
    expect(() => new Kafka({})).toThrow(/DATAHUB_PGQUEUE_MAX_CONNECTIONS/)
    vi.stubEnv('DATAHUB_MESSAGING_TRANSPORT', 'pgqueue')
    expect(() => createKafka({})).toThrow(/DATAHUB_PGQUEUE_MAX_CONNECTIONS/)
    vi.stubEnv('DATAHUB_MESSAGING_TRANSPORT', 'kafka-ish')
    expect(() => createKafka({ brokers: ['x:9092'] })).toThrow(/DATAHUB_MESSAGING_TRANSPORT/)
  })

  it('options win over the environment and are validated the same way, naming the option', () => {
    expect(() => resolveConfig({ schema: 'x"; DROP TABLE y; --' }, {})).toThrow(/options\.schema/)
    expect(() => resolveConfig({ tablePrefix: 'a\u0000b' }, {})).toThrow(/options\.tablePrefix/)
    expect(() => resolveConfig({ pool: { statementTimeoutMillis: Number.NaN } }, {})).toThrow(/options\.pool\.statementTimeoutMillis/)
    expect(() => resolveConfig({ maxMessageBytes: -1 }, {})).toThrow(/options\.maxMessageBytes/)
    expect(() => resolveConfig({ pool: { max: '8' as unknown as number } }, {})).not.toThrow() // a numeric string is fine
  })

  afterEach(() => {
    vi.unstubAllEnvs()
  })
})

describe('secrets in configuration errors', () => {
  // A startup error is logged by whoever catches it: it must not carry the database password.
  it.each([
    [`${P}DATASOURCE_URL`, 'postgres://app:TopSecret123@db.example:99999/queue'],
    [`${P}DATASOURCE_URL`, 'jdbc:postgresql://h1,h2:99999/queue?user=app&password=TopSecret123'],
    ['DATABASE_URL', 'postgresql://app:TopSecret123@db.example:port/queue'],
  ])('%s with a password: the error names the variable but not the password', (variable, value) => {
    const err = startupError({ [variable]: value })
    expect(err.message).toContain(variable)
    expect(err.message).not.toContain('TopSecret123')
  })

  it('an invalid option next to a password does not echo the password', () => {
    const err = (() => {
      try {
        resolveConfig({ connection: { password: 'TopSecret123', user: 42 as unknown as string } }, {})
      } catch (e) {
        return e as Error
      }
      throw new Error('no error')
    })()
    expect(err.message).toContain('options.connection.user')
    expect(err.message).not.toContain('TopSecret123')
  })
})

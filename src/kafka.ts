import type { Admin, AdminConfig, Consumer, ConsumerConfig, KafkaConfig, Logger, ProducerConfig } from 'kafkajs'
import type pg from 'pg'
import type { Tables } from './db/tables.js'
import { PgQueueContext } from './client/context.js'
import { resolveConfig } from './config/resolve.js'
import { toKafkaJSError } from './db/pgErrors.js'
import type { PgQueueConfig, PgQueueOptions } from './config/types.js'
import { createAdmin } from './admin/index.js'
import { createConsumer } from './consumer/index.js'
import { createLogger } from './kafkajs/logger.js'
import { validateClientId } from './kafkajs/messageValidation.js'
import { createProducer, type PgQueueProducer } from './producer/index.js'
import { bypassInstrumentationWrappers, ownMethods } from './tracing/foreignWrappers.js'

/** KafkaJS's client config; `brokers` is optional here, and `pgqueue` carries the PostgreSQL settings. */
export type PgQueueKafkaConfig = Omit<KafkaConfig, 'brokers'> & {
  brokers?: KafkaConfig['brokers']
  pgqueue?: PgQueueOptions
}

/**
 * KafkaJS's `requestTimeout` (enforced unless `enforceRequestTimeout: false`, as in KafkaJS) bounds every statement:
 * it becomes the pool's statement_timeout, unless `pgqueue.pool.statementTimeoutMillis` is given. A statement it
 * ends rejects with KafkaJSRequestTimeoutError (retriable) and emits `network.request_timeout`.
 */
function withRequestTimeout(config: PgQueueKafkaConfig): PgQueueOptions | undefined {
  const { requestTimeout, enforceRequestTimeout, pgqueue } = config
  if (requestTimeout === undefined || enforceRequestTimeout === false || pgqueue?.pool?.statementTimeoutMillis !== undefined) return pgqueue
  return { ...pgqueue, pool: { ...pgqueue?.pool, statementTimeoutMillis: requestTimeout } }
}

/**
 * KafkaJS's `Kafka`, backed by PostgreSQL. Producers, consumers and admins made by one instance share one pool,
 * opened by the first `connect()` and closed by the last `disconnect()`.
 */
export class Kafka {
  readonly config: PgQueueConfig
  private readonly rootLogger: Logger
  private readonly context: PgQueueContext
  private readonly clientId: string

  constructor(config: PgQueueKafkaConfig = {}) {
    validateClientId(config.clientId)
    this.clientId = config.clientId ?? 'kafkajs'
    this.rootLogger = createLogger({ level: config.logLevel, logCreator: config.logCreator })
    this.config = resolveConfig(withRequestTimeout(config))
    this.context = new PgQueueContext(this.config, this.rootLogger)
    // a kafkajs instrumentation that took this package for kafkajs would double every span (tracing/foreignWrappers.ts)
    bypassInstrumentationWrappers(this, Kafka.prototype, OWN_METHODS)
  }

  producer(config?: ProducerConfig): PgQueueProducer {
    return createProducer(this.context, this.rootLogger, config, this.clientId)
  }

  consumer(config: ConsumerConfig): Consumer {
    return createConsumer(this.context, this.rootLogger, this.clientId, config)
  }

  admin(config?: AdminConfig): Admin {
    return createAdmin(this.context, this.rootLogger, config, this.clientId)
  }

  logger(): Logger {
    return this.rootLogger
  }

  /**
   * The pool and table names this Kafka uses (connecting, and migrating when enabled, like a client's connect),
   * for code that works next to the queue: the schema registry, the operations API, an outbox writer using its own
   * transactions. Call `release()` when done; the pool closes with the last user.
   */
  async database(): Promise<{ pool: pg.Pool; tables: Tables; release(): Promise<void> }> {
    let db: Awaited<ReturnType<PgQueueContext['acquire']>>
    try {
      db = await this.context.acquire()
    } catch (e) {
      throw toKafkaJSError(e, 'database') // as the clients' connect(): typed, retriable when the server is unreachable
    }
    let released = false
    return {
      pool: db.pool,
      tables: db.tables,
      release: async () => {
        if (released) return
        released = true
        await this.context.release()
      },
    }
  }
}

const OWN_METHODS = ownMethods(Kafka.prototype)

import pg from 'pg'
import type { Logger } from 'kafkajs'
import { MAX_PRIORITY } from '../config/priorityBands.js'
import type { PgQueueConfig } from '../config/types.js'
import { resolvePoolConfig } from '../db/connection.js'
import { Database } from '../db/database.js'
import { endpointOf } from '../db/roundTrips.js'
import { findPendingMigrations, migrate } from '../store/migrator.js'
import { describePoolTimeouts } from '../db/poolErrors.js'
import { tablesFor, type Tables } from '../db/tables.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import type { MaintenanceReport } from '../maintenance/run.js'
import { startMaintenance, type MaintenanceHandle } from '../maintenance/scheduler.js'
import { storeFor, type Store } from '../store/handle.js'
import { withoutStatementTimeout } from '../store/sessionTimeout.js'
import { OutboxNumbering } from './outboxNumbering.js'
import { TopicCache } from './topicCache.js'
import { Wakeups } from './wakeups.js'

const PARTITION_CHECK_INTERVAL_MS = 3_600_000

/** Migration tokens: configuration, and the priorities a per-priority scan covers (one index probe each). */
export function migrationTokens(config: PgQueueConfig): Record<string, string> {
  return {
    __BATCH_DELETE_LIMIT__: String(config.maintenance.batchDeleteLimit),
    __PARTITION_INTERVAL__: config.partitioning.interval,
    __PARTITION_PREMAKE__: String(config.partitioning.premake),
    __MAX_PRIORITY__: String(MAX_PRIORITY),
  }
}

/**
 * What the producers, consumers and admins of one `Kafka` share: the pool (opened by the first `connect`,
 * closed by the last `disconnect`), table names, topic cache and the LISTEN connection.
 */
export class PgQueueContext {
  readonly tables: Tables
  readonly topics: TopicCache
  readonly wakeups: Wakeups
  /** numbers outbox messages staged by REPEATABLE READ / SERIALIZABLE transactions once they committed */
  readonly outbox: OutboxNumbering
  private refs = 0
  private opening?: Promise<Database>
  private database?: Database
  private embedded?: { stop(): Promise<void> }
  private newClient: () => pg.Client = () => new pg.Client()
  private endpointText = 'pgqueue'
  private partitionsCheckedAt = -Infinity
  private maintenance?: Promise<MaintenanceHandle>
  private readonly maintenanceListeners = new Set<(report: MaintenanceReport) => void>()

  constructor(
    readonly config: PgQueueConfig,
    readonly logger: Logger,
    metadataMaxAgeMs = 300_000,
  ) {
    this.tables = tablesFor(config.schema, config.tablePrefix)
    this.topics = new TopicCache(metadataMaxAgeMs)
    this.wakeups = new Wakeups(() => this.newClient(), this.tables.notifyChannel, logger.namespace('Wakeups'))
    this.outbox = new OutboxNumbering(() => this.database, logger.namespace('Outbox'))
    this.wakeups.on('outbox', () => this.outbox.kick())
    this.wakeups.on('reconnected', () => this.outbox.kick())
  }

  /** The open database; throws when no client of this Kafka is connected. */
  get db(): Database {
    if (!this.database) throw new KafkaJSNonRetriableError('Not connected: call connect() first')
    return this.database
  }

  /** The store functions bound to the open database's pool and tables (src/store/handle.ts). */
  get store(): Store {
    return storeFor(this.db)
  }

  /** host:port of the database, the "broker" of network instrumentation events ('pgqueue' before connecting). */
  get endpoint(): string {
    return this.endpointText
  }

  /**
   * Premade message partitions run out after `premake` intervals; re-check them hourly so a long-running
   * producer never hits "no partition for row" even when maintenance is off.
   */
  async ensurePartitionsIfDue(): Promise<void> {
    if (performance.now() - this.partitionsCheckedAt < PARTITION_CHECK_INTERVAL_MS) return
    this.partitionsCheckedAt = performance.now()
    await this.store.partitions.ensurePartitions()
  }

  /** Reports of the in-app maintenance runs of this client (the operations metrics count them). */
  onMaintenanceReport(listener: (report: MaintenanceReport) => void): () => void {
    this.maintenanceListeners.add(listener)
    return () => this.maintenanceListeners.delete(listener)
  }

  async acquire(): Promise<Database> {
    this.refs++
    try {
      this.opening ??= this.open()
      return await this.opening
    } catch (err) {
      this.refs--
      this.opening = undefined
      throw err
    }
  }

  /**
   * acquire() plus one round trip, as KafkaJS's connect negotiates API versions with the broker: each client's
   * connect proves the server answers, and reports that round trip through `as` (its network events, ApiVersions).
   */
  async connectClient(as: (probe: () => Promise<unknown>) => Promise<unknown>): Promise<void> {
    await this.acquire()
    try {
      await as(() => this.store.server.serverVersion())
    } catch (e) {
      await this.release()
      throw e
    }
  }

  async release(): Promise<void> {
    if (this.refs === 0) return
    this.refs--
    if (this.refs > 0) return
    const opening = this.opening
    this.opening = undefined
    const maintenance = this.maintenance
    this.maintenance = undefined
    // before the pool closes: a run in progress still uses the database
    await (await maintenance)?.stop()
    this.database = undefined
    await this.outbox.stop()
    const db = await opening?.catch(() => undefined)
    await db?.pool.end()
    this.topics.forget()
    await this.embedded?.stop()
    this.embedded = undefined
  }

  private async open(): Promise<Database> {
    const { config, logger } = this
    const { poolConfig, newClient, embedded } = await resolvePoolConfig(config, (msg) => logger.info(msg))
    this.embedded = embedded
    this.newClient = newClient
    const pool = new pg.Pool(poolConfig)
    describePoolTimeouts(pool, {
      name: `pgQueue pool of schema "${config.schema}"`,
      max: config.pool.max,
      waitMs: config.pool.connectionTimeoutMillis,
    })
    this.endpointText = endpointOf(pool)
    // An idle client's error (server restart, terminated backend) must not crash the process: the pool drops it.
    pool.on('error', (err) => logger.warn('Idle PostgreSQL connection failed', { error: err.message }))
    const db = new Database(pool, this.tables, config.pool.leakTimeMinutes * 60_000, (heldMs) =>
      logger.warn('A PostgreSQL connection has been checked out for longer than DATAHUB_PGQUEUE_LEAK_TIME_MINUTES', { heldMs }),
    )
    try {
      await this.prepareSchema(db)
    } catch (err) {
      await pool.end()
      await embedded?.stop()
      throw err
    }
    this.database = db
    // one scheduler per Kafka; its advisory lock lets one process in the whole deployment run each round
    this.maintenance = startMaintenance(this, { onReport: (r) => this.maintenanceListeners.forEach((listen) => listen(r)) })
    return db
  }

  private async prepareSchema(db: Database): Promise<void> {
    // One session without statement_timeout: setup is not a request, so a tight KafkaJS requestTimeout (the pool's
    // statement_timeout) bounds what clients send afterwards, not the schema check, migration and partition upkeep.
    const client = await db.pool.connect()
    try {
      await withoutStatementTimeout(client, () => this.prepareOn(db, client))
    } catch (e) {
      client.release(true)
      throw e
    }
    client.release()
    this.partitionsCheckedAt = performance.now()
  }

  private async prepareOn(db: Database, client: pg.PoolClient): Promise<void> {
    const { config, tables } = this
    // Our own embedded database is always migrated: the zero-setup path must just work.
    if (config.enabled || config.connection.source === 'embedded') {
      const { applied } = await migrate(client, {
        schema: tables.schema,
        prefix: tables.prefix,
        tokens: migrationTokens(config),
        log: (msg) => this.logger.info(msg),
      })
      if (applied.length > 0) this.logger.info('Migrated pgQueue schema', { schema: tables.schema, applied })
    } else {
      const pending = await findPendingMigrations(client, { schema: tables.schema, prefix: tables.prefix, tokens: migrationTokens(config) })
      if (pending.length > 0) {
        throw new KafkaJSNonRetriableError(
          `pgQueue schema "${tables.schema}" (prefix "${tables.prefix}") is missing or out of date (pending: ${pending.join(', ')}): ` +
            'run `npx kafkajs-pgqueue migrate`, or set DATAHUB_PGQUEUE_ENABLED=true to migrate on connect',
        )
      }
    }
    await storeFor(db, client).partitions.ensurePartitions()
  }
}

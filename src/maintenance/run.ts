// One maintenance run (docs/retention.md): premake partitions, seed the sequence ledger, drop expired partitions,
// age / row-cap / byte-cap / aggressive retention and log compaction in bounded batches, sweep orphaned leases, move stranded offsets,
// sweep delivery attempts the group is done with, expire silent registrations and members, VACUUM. The steps and their order are the database's
// maintenance_steps() (R__maintenance_5_drivers.sql), the list the pg_cron procedure runs too. Every step is its own short transaction(s) on one dedicated
// connection, which holds a session advisory lock so only one runner works on a schema + prefix at a time.
import type { Logger } from 'kafkajs'
import type pg from 'pg'
import type { MaintenanceConfig } from '../config/types.js'
import type { Tables } from '../db/tables.js'
import * as housekeeping from '../store/maintenance.js'
import type { ExpiredRegistration } from '../store/maintenance.js'
import { compactionBatch, compactionPlan } from '../store/compaction.js'
import { numberOutbox, OUTBOX_STEP_TRANSACTIONS } from '../store/outboxStaging.js'
import { ensurePartitions } from '../store/partitions.js'
import * as retention from '../store/retention.js'
import { listTopics, type TopicRow } from '../store/topics.js'

export type MaintenanceLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>

/** What a run needs when there is no PgQueueContext (the CLI, tests). */
export interface MaintenanceDeps {
  pool: pg.Pool
  tables: Tables
  maintenance: MaintenanceConfig
  logger?: MaintenanceLogger
}

export interface MaintenanceOptions {
  /** rows per DELETE; default maintenance.batchDeleteLimit */
  batchDeleteLimit?: number
  /** batches per topic (or partition) and policy in one run; the rest waits for the next run. Default 200 */
  maxBatchesPerStep?: number
  /** how long a partition drop waits for the message table's lock before giving up until the next run (200 ms) */
  dropLockTimeoutMs?: number
  /** VACUUM the partitions (and the lease table) after deleting rows; default true */
  vacuum?: boolean
  /** stops the run between two batches (the report says aborted) */
  signal?: AbortSignal
}

export interface PolicyCounts {
  age: number
  rowCap: number
  byteCap: number
  aggressive: number
}

export interface CompletedMaintenance {
  skipped: false
  startedAt: Date
  durationMs: number
  partitionsCreated: number
  ledgerRowsSeeded: number
  /** committed outbox transactions (REPEATABLE READ / SERIALIZABLE callers) whose staged messages this run numbered */
  outboxNumbered: number
  partitions: { dropped: string[]; kept: string[]; busy: string[] }
  /** rows deleted per policy, and per topic name */
  deleted: PolicyCounts
  byTopic: Record<string, PolicyCounts>
  /** partitions of aggressive-retention topics whose rows had to stay, and why */
  aggressiveBlocked: Array<{ topic: string; partition: number; reason: string; group: string | null }>
  /** log compaction of cleanup.policy=compact topics: key-map rows scanned, rows deleted, expired tombstones */
  compaction: { scanned: number; deleted: number; tombstones: number; byTopic: Record<string, number> }
  leasesSwept: number
  offsetsAdvanced: number
  /** delivery-attempt rows (dead letters) deleted: their group's committed offset is past their message */
  attemptsSwept: number
  expired: { registrations: ExpiredRegistration[]; members: number; partitionLeases: number; producerSequences: number }
  vacuumed: string[]
  /** `policy:topic` whose batch cap was reached: more rows wait for the next run */
  truncated: string[]
  aborted: boolean
  /** failed steps, per topic where the step works topic by topic; the other topics and steps still ran */
  errors: Array<{ step: string; topic?: string; message: string }>
}

export type MaintenanceReport = { skipped: true; startedAt: Date } | CompletedMaintenance

const DEFAULT_MAX_BATCHES = 200
/** a drop waiting for the message table's lock queues every producer and consumer behind it: keep it short */
const DEFAULT_DROP_LOCK_TIMEOUT_MS = 200
/** lease-table pages (of batchDeleteLimit rows each) examined per batch cap */
const LEASE_PAGES_PER_BATCH = 10
const SILENT: MaintenanceLogger = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * The parts of a connected PgQueueContext that maintenance uses, named structurally so that maintenance stays
 * below the client layer (the context starts the scheduler).
 */
export interface MaintenanceHost {
  readonly db: { readonly pool: pg.Pool }
  readonly tables: Tables
  readonly config: { readonly maintenance: MaintenanceConfig }
  readonly logger: Logger
}

export function maintenanceDeps(ctx: MaintenanceHost): MaintenanceDeps {
  return {
    pool: ctx.db.pool,
    tables: ctx.tables,
    maintenance: ctx.config.maintenance,
    logger: ctx.logger.namespace('Maintenance'),
  }
}

/** Runs maintenance once; `{ skipped: true }` at once when another runner (any process) holds the lock. */
export async function runMaintenance(source: MaintenanceHost | MaintenanceDeps, opts: MaintenanceOptions = {}): Promise<MaintenanceReport> {
  const deps = 'pool' in source ? source : maintenanceDeps(source)
  const log = deps.logger ?? SILENT
  const startedAt = new Date()
  const client = await deps.pool.connect()
  let broken = false
  try {
    if (!(await housekeeping.tryMaintenanceLock(client, deps.tables))) {
      log.debug('Maintenance skipped: another runner holds the lock', { schema: deps.tables.schema })
      return { skipped: true, startedAt }
    }
    try {
      return await new MaintenanceRun(client, deps, log, opts, startedAt).execute()
    } finally {
      await housekeeping.releaseMaintenanceLock(client, deps.tables).catch((err: Error) => {
        broken = true // a connection that may still hold the lock must not go back to the pool
        log.warn('Could not release the maintenance lock', { error: err.message })
      })
    }
  } finally {
    client.release(broken || undefined)
  }
}

class MaintenanceRun {
  private readonly t: Tables
  private readonly limit: number
  private readonly maxBatches: number
  private readonly report: CompletedMaintenance
  private topics?: Promise<TopicRow[]>

  constructor(
    private readonly db: pg.PoolClient,
    private readonly deps: MaintenanceDeps,
    private readonly log: MaintenanceLogger,
    private readonly opts: MaintenanceOptions,
    startedAt: Date,
  ) {
    this.t = deps.tables
    this.limit = opts.batchDeleteLimit ?? deps.maintenance.batchDeleteLimit
    this.maxBatches = opts.maxBatchesPerStep ?? DEFAULT_MAX_BATCHES
    this.report = {
      skipped: false,
      startedAt,
      durationMs: 0,
      partitionsCreated: 0,
      ledgerRowsSeeded: 0,
      outboxNumbered: 0,
      partitions: { dropped: [], kept: [], busy: [] },
      deleted: { age: 0, rowCap: 0, byteCap: 0, aggressive: 0 },
      byTopic: {},
      aggressiveBlocked: [],
      compaction: { scanned: 0, deleted: 0, tombstones: 0, byTopic: {} },
      leasesSwept: 0,
      offsetsAdvanced: 0,
      attemptsSwept: 0,
      expired: { registrations: [], members: 0, partitionLeases: 0, producerSequences: 0 },
      vacuumed: [],
      truncated: [],
      aborted: false,
      errors: [],
    }
  }

  /** How this runner does each step of maintenance_steps() (the database's list decides which run, in what order). */
  private readonly steps: Record<string, () => Promise<void>> = {
    'premake partitions': () => this.premake(),
    'seed sequence ledger': () => this.seedLedger(),
    'number outbox': () => this.numberOutbox(),
    'drop expired partitions': () => this.dropPartitions(),
    'age retention': () => this.rowPolicy('age retention', 'age', (x) => x.retentionMaxAgeSeconds > 0),
    'row cap': () => this.rowPolicy('row cap', 'rowCap', (x) => BigInt(x.maxRowsPerTopic) > 0n),
    'byte cap': () => this.rowPolicy('byte cap', 'byteCap', (x) => BigInt(x.maxTotalPayloadBytes) > 0n),
    'aggressive retention': () => this.aggressive(),
    compaction: () => this.compact(),
    'sweep orphaned leases': () => this.sweepLeases(),
    'advance stranded offsets': () => this.advanceOffsets(),
    'sweep delivery attempts': () => this.sweepAttempts(),
    'expire registrations': () => this.expire(),
    vacuum: () => this.vacuum(),
  }

  async execute(): Promise<CompletedMaintenance> {
    for (const name of await housekeeping.maintenanceSteps(this.db, this.t)) {
      if (this.stopRequested()) break
      const step = this.steps[name]
      try {
        if (!step) throw new Error('this version of the library does not know the step (migrated by a newer one?)')
        await step()
      } catch (err) {
        this.fail(name, undefined, err)
      }
    }
    this.report.durationMs = Date.now() - this.report.startedAt.getTime()
    this.summarize()
    return this.report
  }

  private stopRequested(): boolean {
    if (this.opts.signal?.aborted) this.report.aborted = true
    return this.report.aborted
  }

  private async premake(): Promise<void> {
    this.report.partitionsCreated = await ensurePartitions(this.db, this.t)
  }

  private async seedLedger(): Promise<void> {
    this.report.ledgerRowsSeeded = await housekeeping.seedSequenceLedger(this.db, this.t)
  }

  private async numberOutbox(): Promise<void> {
    for (let i = 0; i < this.maxBatches && !this.stopRequested(); i++) {
      const n = await numberOutbox(this.db, this.t)
      this.report.outboxNumbered += n
      if (n < OUTBOX_STEP_TRANSACTIONS) return
    }
    this.report.truncated.push('outbox')
  }

  private async dropPartitions(): Promise<void> {
    const timeout = this.opts.dropLockTimeoutMs ?? DEFAULT_DROP_LOCK_TIMEOUT_MS
    for (const name of await retention.partitionDropCandidates(this.db, this.t)) {
      if (this.stopRequested()) return
      const outcome = await retention.dropExpiredPartition(this.db, this.t, name, timeout)
      if (outcome === 'dropped') this.log.info('Dropped expired message partition', { partition: name })
      if (outcome !== 'gone') this.report.partitions[outcome].push(name)
      if (outcome === 'busy') {
        // every attempt holds the traffic queued behind its lock request for the timeout: one per run
        this.log.warn('Message table busy: partition drops left for the next run', { partition: name })
        return
      }
    }
  }

  /** Read once per run, after the partition drops; a failed read is retried by the next step that needs it. */
  private async topicList(): Promise<TopicRow[]> {
    this.topics ??= listTopics(this.db, this.t)
    return await this.topics.catch((err: unknown) => {
      this.topics = undefined
      throw err
    })
  }

  private async rowPolicy(step: string, policy: retention.RetentionPolicy, applies: (topic: TopicRow) => boolean): Promise<void> {
    for (const topic of (await this.topicList()).filter(applies)) {
      if (this.stopRequested()) return
      await this.drainTopic(step, policy, topic)
    }
  }

  private async aggressive(): Promise<void> {
    const expiry = this.deps.maintenance.registrationExpirySeconds
    const topics = await this.topicList()
    const names = new Map(topics.map((x) => [x.id, x.name]))
    for (const p of await retention.aggressivePlan(this.db, this.t, expiry)) {
      if (p.purgeThrough !== null) continue
      const blocked = {
        topic: names.get(p.topicId) ?? `#${p.topicId}`,
        partition: p.partition,
        reason: p.blockedReason ?? 'blocked',
        group: p.blockedGroup,
      }
      this.report.aggressiveBlocked.push(blocked)
      if (p.blockedReason === 'STUCK_AHEAD') this.log.warn('Aggressive retention skipped: a registered group is STUCK_AHEAD', blocked)
    }
    await this.rowPolicy('aggressive retention', 'aggressive', (x) => x.aggressiveRetention)
  }

  /** Every log partition of a compacted topic, batch by batch; a failure is reported for its topic, the rest go on. */
  private async compact(): Promise<void> {
    const expiry = this.deps.maintenance.registrationExpirySeconds
    const c = this.report.compaction
    for (const target of await compactionPlan(this.db, this.t)) {
      if (this.stopRequested()) return
      try {
        let i = 0
        for (; i < this.maxBatches; i++) {
          if (this.stopRequested()) return
          const b = await compactionBatch(this.db, this.t, target, this.limit, expiry)
          c.scanned += b.scanned
          c.deleted += b.deleted
          c.tombstones += b.tombstones
          if (b.deleted > 0) c.byTopic[target.topic] = (c.byTopic[target.topic] ?? 0) + b.deleted
          if (!b.more) break
        }
        if (i === this.maxBatches) this.report.truncated.push(`compaction:${target.topic}:${target.partition}`)
      } catch (err) {
        this.fail('compaction', target.topic, err)
      }
    }
  }

  /** All batches of one policy for one topic; a failure is reported for this topic and the next topic goes on. */
  private async drainTopic(step: string, policy: retention.RetentionPolicy, topic: TopicRow): Promise<void> {
    const expiry = this.deps.maintenance.registrationExpirySeconds
    let cursor = retention.FIRST_BATCH
    try {
      await this.drain(`${policy}:${topic.name}`, async () => {
        const res = await retention.retentionBatch(this.db, this.t, policy, topic.id, cursor, this.limit, expiry)
        cursor = res.cursor
        this.count(topic.name, policy, res.deleted) // counted as it goes: a later batch may fail
        return res.deleted
      })
    } catch (err) {
      this.fail(step, topic.name, err)
    }
  }

  private fail(step: string, topic: string | undefined, err: unknown): void {
    const message = (err as Error).message
    this.report.errors.push(topic === undefined ? { step, message } : { step, topic, message })
    this.log.error('Maintenance step failed', { step, topic, error: message })
  }

  private async sweepLeases(): Promise<void> {
    let after = '0'
    for (let page = 0; page < this.maxBatches * LEASE_PAGES_PER_BATCH; page++) {
      if (this.stopRequested()) return
      const { lastId, deleted } = await housekeeping.sweepOrphanLeases(this.db, this.t, after, this.limit)
      this.report.leasesSwept += deleted
      if (lastId === null) return
      after = lastId
    }
    this.report.truncated.push('leases')
  }

  /** One statement: the table holds only failing and just-moved messages, so a run's cap is one batch's worth. */
  private async sweepAttempts(): Promise<void> {
    const cap = this.limit * this.maxBatches
    this.report.attemptsSwept = await housekeeping.sweepDeliveryAttempts(this.db, this.t, cap)
    if (this.report.attemptsSwept === cap) this.report.truncated.push('delivery attempts')
  }

  private async advanceOffsets(): Promise<void> {
    this.report.offsetsAdvanced = await housekeeping.advanceStrandedOffsets(this.db, this.t)
    if (this.report.offsetsAdvanced > 0) {
      this.log.info('Moved committed offsets past deleted messages', { offsets: this.report.offsetsAdvanced })
    }
  }

  private async expire(): Promise<void> {
    const expiry = this.deps.maintenance.registrationExpirySeconds
    const registrations = await housekeeping.expireRegistrations(this.db, this.t, expiry)
    for (const r of registrations) {
      this.log.info('Expired consumer registration', {
        groupId: r.group,
        topic: r.topic,
        lastHeartbeatAt: r.lastHeartbeatAt.toISOString(),
        expirySeconds: expiry,
      })
    }
    this.report.expired = { registrations, ...(await housekeeping.expireMembers(this.db, this.t, expiry)) }
  }

  private async vacuum(): Promise<void> {
    const d = this.report.deleted
    const rowsDeleted = d.age + d.rowCap + d.byteCap + d.aggressive + this.report.compaction.deleted
    if (this.opts.vacuum === false) return
    const targets = rowsDeleted > 0 ? await housekeeping.vacuumTargets(this.db, this.t) : []
    if (this.report.leasesSwept > 0) targets.push(this.t.messageGroupLease)
    for (const name of targets) {
      if (this.stopRequested()) return
      await housekeeping.vacuumTable(this.db, name)
      this.report.vacuumed.push(name)
    }
  }

  /** Runs batches until one comes back short, the batch cap is reached (recorded as truncated) or a stop. */
  private async drain(label: string, batch: () => Promise<number>): Promise<number> {
    let deleted = 0
    for (let i = 0; i < this.maxBatches; i++) {
      if (this.stopRequested()) return deleted
      const n = await batch()
      deleted += n
      if (n < this.limit) return deleted
    }
    this.report.truncated.push(label)
    return deleted
  }

  private count(topic: string, policy: keyof PolicyCounts, deleted: number): void {
    if (deleted === 0) return
    this.report.deleted[policy] += deleted
    const row = (this.report.byTopic[topic] ??= { age: 0, rowCap: 0, byteCap: 0, aggressive: 0 })
    row[policy] += deleted
  }

  private summarize(): void {
    const r = this.report
    const busy = r.partitions.dropped.length + r.leasesSwept + r.offsetsAdvanced + r.expired.registrations.length
    const deleted = r.deleted.age + r.deleted.rowCap + r.deleted.byteCap + r.deleted.aggressive + r.compaction.deleted
    const line = {
      durationMs: r.durationMs,
      deleted: r.deleted,
      compacted: r.compaction.deleted,
      partitionsDropped: r.partitions.dropped.length,
      leasesSwept: r.leasesSwept,
      truncated: r.truncated.length,
      errors: r.errors.length,
    }
    if (deleted + busy + r.errors.length > 0) this.log.info('Maintenance run finished', line)
    else this.log.debug('Maintenance run finished', line)
  }
}

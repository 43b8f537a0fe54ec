import type { EachBatchHandler, EachMessageHandler, Logger, RetryOptions, TopicOffsets } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { bandIndexOf, redistributeUnused, splitBatchAcrossBands } from '../config/priorityBands.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { consumerEvents, type InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { createRetrier, isRetriableHandlerError } from '../kafkajs/retry.js'
import { fetchPartitions, type FetchedPartition, type FetchedRow } from '../store/fetch.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { commitOffsets } from '../store/offsets.js'
import { topicWatermarks } from '../store/topics.js'
import { createBatch, toKafkaMessage, type DeliveredMessage } from './batch.js'
import type { BatchObserver } from '../ops/hooks.js'
import type { GroupMembership } from './groupMembership.js'
import type { PartitionState } from './partitionState.js'
import type { PauseRegistry } from './pauseRegistry.js'

export interface RunnerOptions {
  ctx: PgQueueContext
  membership: GroupMembership
  paused: PauseRegistry
  emitter: InstrumentationEmitter<typeof consumerEvents>
  logger: Logger
  groupId: string
  eachMessage?: EachMessageHandler | null
  eachBatch?: EachBatchHandler | null
  eachBatchAutoResolve: boolean
  autoCommit: boolean
  autoCommitInterval: number | null
  autoCommitThreshold: number | null
  concurrency: number
  maxWaitTimeInMs: number
  maxBytesPerPartition: number
  retry: RetryOptions
  onCrash: (error: Error) => void
  /** told about every handled batch (queue-time metrics); a throwing observer is ignored */
  observers?: ReadonlySet<BatchObserver>
}

interface PartitionBatch {
  state: PartitionState
  delivered: DeliveredMessage[]
}

/** The next round's fetch, issued while the current round's batches are processed. */
interface Prefetch {
  states: PartitionState[]
  /** each state's fetch positions when the fetch was issued: the rows are valid only if nothing moved them */
  positions: bigint[][]
  result: Promise<Array<FetchedPartition | null> | undefined>
}

/**
 * The fetch loop: one statement fetches every held partition, batches run through eachMessage / eachBatch with
 * at most `concurrency` partitions at a time, resolved offsets are committed per batch. While a round's batches
 * are processed the next round is already being fetched (used only if nothing moved the partitions meanwhile).
 * Between rounds the member heartbeats (and rebalances); when there is nothing to do it sleeps until a NOTIFY, a
 * group change or maxWaitTimeInMs. Handler failures follow KafkaJS: commit what was resolved, refetch from there
 * with backoff, and crash once the retries are spent.
 */
export class Runner {
  running = false
  private loop?: Promise<void>
  private wake?: () => void
  private notified = false
  private lastCommitAt = Date.now()
  private prefetch?: Prefetch
  private readonly unsubscribe: Array<() => void> = []

  constructor(private readonly o: RunnerOptions) {}

  async start(): Promise<void> {
    const { ctx, membership } = this.o
    const onTopic = (topicId: string) => {
      if (membership.topicName(topicId) !== undefined) this.poke()
    }
    const onGroup = (group: string) => {
      if (group === this.o.groupId) {
        membership.markChanged()
        this.poke()
      }
    }
    const onReconnect = () => this.poke()
    ctx.wakeups.on('topic', onTopic)
    ctx.wakeups.on('group', onGroup)
    ctx.wakeups.on('reconnected', onReconnect)
    this.unsubscribe.push(
      () => ctx.wakeups.off('topic', onTopic),
      () => ctx.wakeups.off('group', onGroup),
      () => ctx.wakeups.off('reconnected', onReconnect),
    )
    if (ctx.config.listen) await ctx.wakeups.start()
    await membership.sync(true)
    this.running = true
    const retrier = createRetrier(this.o.retry)
    this.loop = retrier(async (bail) => {
      try {
        await this.consume()
      } catch (e) {
        if (!this.running) return
        const err = isRetriableHandlerError(e) ? (e as Error) : new KafkaJSNonRetriableError(e as Error)
        this.o.logger.error(`Error while consuming: ${(e as Error)?.message ?? e}`, { groupId: this.o.groupId })
        if (!isRetriableHandlerError(e)) bail(err)
        throw err
      }
    }).catch((e: Error) => {
      if (this.running) this.o.onCrash(e)
    })
  }

  /** Stops fetching, waits for the batch in flight, commits what was resolved and leaves the group. */
  async stop(): Promise<void> {
    const wasRunning = this.running
    this.running = false
    this.poke()
    await this.loop
    this.unsubscribe.splice(0).forEach((off) => off())
    if (this.o.ctx.config.listen) await this.o.ctx.wakeups.stop()
    this.prefetch = undefined
    if (!wasRunning) return
    try {
      if (this.o.autoCommit) await this.commit([...this.o.membership.partitions.values()])
    } finally {
      await this.o.membership.leave()
    }
  }

  /** Something happened that may make new work available (NOTIFY, resume, seek, group change). */
  poke(): void {
    this.notified = true
    this.wake?.()
  }

  private async consume(): Promise<void> {
    while (this.running) {
      // a NOTIFY after this point makes the loop fetch again instead of sleeping (a prefetch issued before it is
      // only used when it has rows, and then another fetch follows anyway)
      this.notified = false
      await this.o.membership.sync()
      if (!this.running) return
      const batches = await this.fetchRound()
      if (batches.length === 0) {
        if (!this.notified) await this.idle()
        continue
      }
      await this.processAll(batches)
    }
  }

  private idle(): Promise<void> {
    const { ctx, maxWaitTimeInMs, membership } = this.o
    // without a live LISTEN connection, poll at DataHub's empty-poll pace instead
    const wait = ctx.wakeups.listening ? maxWaitTimeInMs : Math.min(maxWaitTimeInMs, ctx.config.consumerPoll.emptyPollSleepMs)
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(wait, membership.nextDueIn()))
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = () => {
        this.wake = undefined
        done()
      }
    })
  }

  private async fetchRound(): Promise<PartitionBatch[]> {
    const { membership, emitter, paused } = this.o
    const states = [...membership.partitions.values()].filter((s) => !s.revoked && !paused.isPaused(s.topic, s.partition))
    await this.applySeeks(states)
    const prefetched = await this.takePrefetch(states)
    if (states.length === 0) return []
    const started = Date.now()
    emitter.emit(consumerEvents.FETCH_START, { nodeId: 'pgqueue' })
    const fetched = prefetched ?? (await this.fetch(states))
    emitter.emit(consumerEvents.FETCH, { numberOfBatches: fetched.filter((f) => f && f.rows.length > 0).length, duration: Date.now() - started, nodeId: 'pgqueue' })
    const batches: PartitionBatch[] = []
    fetched.forEach((f, i) => {
      if (!f) return
      const state = states[i]
      state.highWatermark = f.highWatermark
      const rows = this.select(f.rows)
      if (rows.length === 0) return
      const delivered = rows.map((r) => toKafkaMessage(r, state.topic, state.partition))
      for (const d of delivered) state.delivered(d.seq, d.priority)
      batches.push({ state, delivered })
    })
    // fetch the next round while this one is processed
    if (batches.length > 0 && this.running) {
      const result = this.fetch(states).catch(() => undefined)
      this.prefetch = { states, positions: states.map((s) => [...s.positions]), result }
    }
    return batches
  }

  private fetch(states: PartitionState[]): Promise<Array<FetchedPartition | null>> {
    const { ctx } = this.o
    return fetchPartitions(ctx.db.pool, ctx.tables, states, ctx.config.consumerPoll.maxBatchMessages)
  }

  /**
   * The prefetched round, if it is still exactly what a fetch now would ask for: the same partitions, none of them
   * moved since (rewind after a failure or pause, seek, revocation) and rows in it. Anything else is discarded and
   * fetched afresh (an empty prefetch too: it may predate a NOTIFY).
   */
  private async takePrefetch(states: PartitionState[]): Promise<Array<FetchedPartition | null> | undefined> {
    const pre = this.prefetch
    this.prefetch = undefined
    if (!pre) return undefined
    const result = await pre.result
    if (!result || pre.states.length !== states.length) return undefined
    for (let i = 0; i < states.length; i++) {
      const s = states[i]
      if (pre.states[i] !== s || s.revoked || s.pendingSeek !== undefined) return undefined
      const before = pre.positions[i]
      for (let p = 0; p < before.length; p++) if (before[p] !== s.positions[p]) return undefined
    }
    return result.some((f) => f && f.rows.length > 0) ? result : undefined
  }

  /**
   * Weighted fair queuing across priority bands: the batch budget is split by weight, slots a band cannot use go
   * to bands that have more, and the partition's byte budget caps the batch (at least one message always goes).
   */
  private select(rows: FetchedRow[]): FetchedRow[] {
    const { priorityBands, consumerPoll } = this.o.ctx.config
    const byBand: FetchedRow[][] = priorityBands.map(() => [])
    for (const row of rows) byBand[bandIndexOf(priorityBands, row.priority)].push(row)
    const takes = redistributeUnused(
      splitBatchAcrossBands(priorityBands, consumerPoll.maxBatchMessages),
      byBand.map((b) => b.length),
    )
    const chosen: FetchedRow[] = []
    let bytes = 0
    for (let band = 0; band < byBand.length; band++) {
      for (const row of byBand[band].slice(0, takes[band])) {
        bytes += row.payloadBytes
        if (chosen.length > 0 && bytes > this.o.maxBytesPerPartition) return chosen
        chosen.push(row)
      }
    }
    return chosen
  }

  /** Applies seeks before fetching: '-1' is the log end, '-2' the first retained offset. */
  private async applySeeks(states: PartitionState[]): Promise<void> {
    const { ctx, groupId, membership, autoCommit } = this.o
    for (const state of states) {
      if (state.pendingSeek === undefined) continue
      let seq = state.pendingSeek
      const marks = (await topicWatermarks(ctx.db.pool, ctx.tables, state.topicId)).find((w) => w.partition === state.partition)
      const [low, high] = [BigInt(marks?.low ?? '0'), BigInt(marks?.high ?? '0')]
      if (seq === -1n) seq = high
      else if (seq === -2n) seq = low
      else if (seq > high) {
        // past the end of the log the partition would deliver nothing, silently: reset as Kafka does
        const reset = membership.fromBeginning(state.topic) ? low : high
        this.o.logger.warn('Seek past the end of the log; resetting', {
          groupId,
          topic: state.topic,
          partition: state.partition,
          offset: seq.toString(),
          highWatermark: high.toString(),
          resetTo: reset.toString(),
        })
        seq = reset
      }
      state.seekTo(seq)
      if (autoCommit) {
        await commitOffsets(ctx.db.pool, ctx.tables, groupId, [{ topicId: state.topicId, partition: state.partition, offset: seq.toString() }], {
          lockOwner: membership.lockOwner,
          exact: true,
        })
      }
    }
  }

  private async processAll(batches: PartitionBatch[]): Promise<void> {
    const queue = [...batches]
    const unfinished = new Set(batches)
    const worker = async () => {
      for (let b = queue.shift(); b && this.running; b = queue.shift()) {
        await this.process(b)
        unfinished.delete(b)
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(this.o.concurrency, batches.length) }, worker))
    } finally {
      // batches that never ran (stop, or another partition's failure) are fetched again next time
      for (const b of unfinished) b.state.rewind()
    }
  }

  private async process({ state, delivered }: PartitionBatch): Promise<void> {
    const { emitter, eachMessage, eachBatch, membership } = this.o
    const batch = createBatch(state.topic, state.partition, state.highWatermark, delivered)
    const info = {
      topic: batch.topic,
      partition: batch.partition,
      highWatermark: batch.highWatermark,
      offsetLag: batch.offsetLag(),
      offsetLagLow: batch.offsetLagLow(),
      batchSize: delivered.length,
      firstOffset: batch.firstOffset(),
      lastOffset: batch.lastOffset(),
    }
    const startedAt = Date.now()
    emitter.emit(consumerEvents.START_BATCH_PROCESS, info)
    const byOffset = new Map(delivered.map((d, i) => [d.message.offset, i]))
    let resolvedUpTo = -1
    const resolveOffset = (offset: string) => {
      const index = byOffset.get(String(offset))
      if (index === undefined) return
      for (let i = resolvedUpTo + 1; i <= index; i++) state.resolve(delivered[i].seq, delivered[i].priority)
      resolvedUpTo = Math.max(resolvedUpTo, index)
    }
    const pause = () => {
      this.o.paused.pause([{ topic: state.topic, partitions: [state.partition] }])
      return () => {
        this.o.paused.resume([{ topic: state.topic, partitions: [state.partition] }])
        this.poke()
      }
    }
    const heartbeat = () => membership.heartbeatIfDue()
    const stale = () => state.pendingSeek !== undefined || state.revoked
    try {
      if (eachMessage) {
        for (const d of delivered) {
          if (!this.running || stale()) break
          await eachMessage({ topic: state.topic, partition: state.partition, message: d.message, heartbeat, pause })
          resolveOffset(d.message.offset)
          await heartbeat()
          await this.commitIfNecessary()
          if (this.o.paused.isPaused(state.topic, state.partition)) break
        }
      } else if (eachBatch) {
        await eachBatch({
          batch,
          resolveOffset,
          heartbeat,
          pause,
          commitOffsetsIfNecessary: async (offsets) => {
            if (offsets) await this.commitExplicit(offsets.topics)
            else await this.commitIfNecessary()
          },
          uncommittedOffsets: () => this.uncommittedOffsets(),
          isRunning: () => this.running,
          isStale: stale,
        })
        if (this.o.eachBatchAutoResolve) resolveOffset(batch.lastOffset())
      }
    } catch (e) {
      if (this.o.autoCommit) await this.commit([state])
      state.rewind()
      throw e
    }
    // messages left unhandled (pause, seek, stop, revoked) are fetched again
    if (resolvedUpTo < delivered.length - 1 && (eachMessage || this.o.paused.isPaused(state.topic, state.partition))) state.rewind()
    emitter.emit(consumerEvents.END_BATCH_PROCESS, { ...info, duration: Date.now() - startedAt })
    this.observe(state, delivered, startedAt)
    if (this.o.autoCommit) await this.commit([state])
  }

  private observe(state: PartitionState, delivered: DeliveredMessage[], startedAt: number): void {
    const { observers, groupId, ctx } = this.o
    if (!observers || observers.size === 0) return
    const observation = {
      topic: state.topic,
      partition: state.partition,
      groupId,
      count: delivered.length,
      durationMs: Date.now() - startedAt,
      startedAt,
      enqueueTimestamps: delivered.map((d) => d.enqueuedAtMs),
      priorities: delivered.map((d) => d.priority),
      bands: delivered.map((d) => bandIndexOf(ctx.config.priorityBands, d.priority)),
    }
    for (const observer of observers) {
      try {
        observer(observation)
      } catch {
        // metrics must never break consumption
      }
    }
  }

  private async commitIfNecessary(): Promise<void> {
    const { autoCommit, autoCommitInterval, autoCommitThreshold, membership } = this.o
    if (!autoCommit) return
    const states = [...membership.partitions.values()]
    const pending = states.reduce((n, s) => n + s.uncommitted, 0)
    const dueByTime = autoCommitInterval !== null && Date.now() - this.lastCommitAt >= autoCommitInterval
    const dueByCount = autoCommitThreshold !== null && pending >= autoCommitThreshold
    if (dueByTime || dueByCount) await this.commit(states)
  }

  /** Commits the resolved progress of these partitions; a partition whose lease we lost is fenced off. */
  async commit(states: PartitionState[]): Promise<void> {
    const { ctx, groupId, membership, emitter, logger } = this.o
    const dirty = states.filter((s) => s.dirty)
    if (dirty.length === 0) return
    let rows: Array<{ topicId: string; partition: number; offset: string }>
    try {
      rows = await commitOffsets(
        ctx.db.pool,
        ctx.tables,
        groupId,
        dirty.map((s) => ({ topicId: s.topicId, partition: s.partition, priorityPositions: s.resolved })),
        // at-least-once needs no WAL flush here: a commit lost in a server crash means redelivery (decision 004)
        { lockOwner: membership.lockOwner, exact: false, durable: false },
      )
    } catch (e) {
      throw toKafkaJSError(e, 'commit offsets')
    }
    this.lastCommitAt = Date.now()
    const done = new Set(rows.map((r) => `${r.topicId}:${r.partition}`))
    for (const s of dirty) {
      if (done.has(`${s.topicId}:${s.partition}`)) s.committed()
      else {
        logger.warn('Commit refused: another member holds this partition now', { groupId, topic: s.topic, partition: s.partition })
        s.revoked = true
      }
    }
    if (rows.length > 0) {
      emitter.emit(consumerEvents.COMMIT_OFFSETS, {
        groupId,
        memberId: membership.memberId,
        groupGenerationId: membership.generation,
        topics: groupByTopic(rows.map((r) => ({ topic: membership.topicName(r.topicId) ?? r.topicId, partition: r.partition, offset: r.offset }))),
      })
    }
  }

  /** commitOffsetsIfNecessary(offsets) / consumer.commitOffsets: exactly these offsets (next to read). */
  async commitExplicit(topics: TopicOffsets[]): Promise<void> {
    const { ctx, groupId, membership, emitter } = this.o
    const rows = await ctx.topics.get(ctx.db, topics.map((t) => t.topic))
    const commits = topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topicId: rows.get(t.topic)?.id ?? '0',
        partition: p.partition,
        offset: String(p.offset),
        metadata: (p as { metadata?: string | null }).metadata ?? null,
      })),
    )
    const wanted = commits.filter((c) => c.topicId !== '0')
    let done: Array<{ topicId: string; partition: number; offset: string }>
    try {
      // only partitions this member holds: a member that lost one must not move another's progress (even back)
      done = await commitOffsets(ctx.db.pool, ctx.tables, groupId, wanted, { lockOwner: membership.lockOwner, exact: true })
    } catch (e) {
      throw toKafkaJSError(e, 'commit offsets')
    }
    for (const r of done) membership.partitions.get(`${membership.topicName(r.topicId)}:${r.partition}`)?.committed()
    const refused = wanted.filter((c) => !done.some((r) => r.topicId === c.topicId && r.partition === c.partition))
    emitter.emit(consumerEvents.COMMIT_OFFSETS, {
      groupId,
      memberId: membership.memberId,
      groupGenerationId: membership.generation,
      topics: groupByTopic(done.map((r) => ({ topic: membership.topicName(r.topicId) ?? r.topicId, partition: r.partition, offset: r.offset }))),
    })
    if (refused.length > 0) {
      for (const c of refused) {
        const state = [...membership.partitions.values()].find((s) => s.topicId === c.topicId && s.partition === c.partition)
        if (state) state.revoked = true
      }
      this.o.logger.warn('Commit refused: this member does not hold these partitions (any more)', {
        groupId,
        partitions: refused.map((c) => `${membership.topicName(c.topicId)}:${c.partition}`),
      })
      throw protocolError('REBALANCE_IN_PROGRESS')
    }
  }

  uncommittedOffsets(): { topics: TopicOffsets[] } {
    const dirty = [...this.o.membership.partitions.values()].filter((s) => s.dirty)
    return { topics: groupByTopic(dirty.map((s) => ({ topic: s.topic, partition: s.partition, offset: s.resolvedOffset() }))) }
  }
}

function groupByTopic(entries: Array<{ topic: string; partition: number; offset: string }>): TopicOffsets[] {
  const byTopic = new Map<string, TopicOffsets>()
  for (const e of entries) {
    let t = byTopic.get(e.topic)
    if (!t) byTopic.set(e.topic, (t = { topic: e.topic, partitions: [] }))
    t.partitions.push({ partition: e.partition, offset: e.offset })
  }
  return [...byTopic.values()]
}

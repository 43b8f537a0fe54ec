import type { EachBatchHandler, EachMessageHandler, Logger, RetryOptions, TopicOffsets } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { bandIndexOf, redistributeUnused, splitBatchAcrossBands } from '../config/priorityBands.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { consumerEvents, type InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { createRetrier, isRetriableHandlerError } from '../kafkajs/retry.js'
import { fetchPartitions, PRIORITY_LEVELS, type FetchedPartition, type FetchedRow } from '../store/fetch.js'
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

/** What one round delivers from one partition: consecutive batches, processed in order. */
interface PartitionWork {
  state: PartitionState
  batches: DeliveredMessage[][]
}

/**
 * Rows one fetch round asks for across all partitions, in whole batches (at least one batch per partition, at most
 * MAX_BATCHES_PER_ROUND). A round has a fixed cost (planning the bulk fetch, a round trip, a commit) of roughly a
 * few hundred rows' worth: one partition read in 500-row rounds drains at about 75,000 msg/s here, in 2,000-row
 * rounds at 95,000 to 130,000 and in 4,000-row rounds at 130,000 to 150,000; larger rounds gained nothing more
 * (docs/performance.md). Memory: a round plus the prefetched next one, about 2 x 4,000 rows.
 */
const ROUND_ROWS = 4000
const MAX_BATCHES_PER_ROUND = 8

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
  /** rows the last fetch returned, for choosing how to fetch next */
  private lastFetchRows = 0
  /** every offset write of this member, in order (a later commit must never land before an earlier one) */
  private commits: Promise<unknown> = Promise.resolve()
  /** a background commit failed: the loop throws it at its next step (then KafkaJS's retry policy applies) */
  private commitFailure?: unknown
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

  /** background commits waiting to start, by partition: one statement takes them all */
  private queuedCommit?: Set<PartitionState>

  private async consume(): Promise<void> {
    while (this.running) {
      // a NOTIFY after this point makes the loop fetch again instead of sleeping (a prefetch issued before it is
      // only used when it has rows, and then another fetch follows anyway)
      this.notified = false
      this.throwCommitFailure()
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

  private async fetchRound(): Promise<PartitionWork[]> {
    const { membership, emitter, paused } = this.o
    const states = [...membership.partitions.values()].filter((s) => !s.revoked && !paused.isPaused(s.topic, s.partition))
    await this.applySeeks(states)
    const prefetched = await this.takePrefetch(states)
    if (states.length === 0) return []
    const started = Date.now()
    emitter.emit(consumerEvents.FETCH_START, { nodeId: 'pgqueue' })
    const perRound = this.batchesPerRound(states.length)
    const fetched = prefetched ?? (await this.fetch(states))
    emitter.emit(consumerEvents.FETCH, { numberOfBatches: fetched.filter((f) => f && f.rows.length > 0).length, duration: Date.now() - started, nodeId: 'pgqueue' })
    const work: PartitionWork[] = []
    fetched.forEach((f, i) => {
      if (!f) return
      const state = states[i]
      state.highWatermark = f.highWatermark
      const batches = this.selectBatches(f.rows, perRound).map((rows) => rows.map((r) => toKafkaMessage(r, state.topic, state.partition)))
      if (batches.length === 0) return
      for (const delivered of batches) for (const d of delivered) state.delivered(d.seq, d.priority)
      work.push({ state, batches })
    })
    // fetch the next round while this one is processed
    if (work.length > 0 && this.running) {
      const result = this.fetch(states).catch(() => undefined)
      this.prefetch = { states, positions: states.map((s) => [...s.positions]), result }
    }
    return work
  }

  private batchesPerRound(partitions: number): number {
    const perBatch = this.o.ctx.config.consumerPoll.maxBatchMessages
    return Math.max(1, Math.min(MAX_BATCHES_PER_ROUND, Math.floor(ROUND_ROWS / (partitions * perBatch))))
  }

  /**
   * A backlog is read in bulk (binary COPY: cheapest per row, but planned each time); a consumer that is keeping up
   * reads the few new rows with the prepared statement, which answers faster. The last fetch decides.
   */
  private fetch(states: PartitionState[]): Promise<Array<FetchedPartition | null>> {
    const { ctx } = this.o
    const perBatch = ctx.config.consumerPoll.maxBatchMessages
    const bulk = this.lastFetchRows >= perBatch
    return fetchPartitions(ctx.db.pool, ctx.tables, states, perBatch * this.batchesPerRound(states.length), bulk).then((fetched) => {
      this.lastFetchRows = fetched.reduce((n, f) => n + (f?.rows.length ?? 0), 0)
      return fetched
    })
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
   * Weighted fair queuing across priority bands, for up to `count` consecutive batches of one partition: each
   * batch's budget is split by weight, slots a band cannot use go to bands that have more, and the partition's
   * byte budget caps the batch (at least one message always goes). A priority whose fetch hit the row limit may
   * have more rows than were read, so a further batch is only cut while each such priority still has a full
   * batch's worth left: every batch is then exactly what a fresh fetch would have given.
   */
  private selectBatches(rows: FetchedRow[], count: number): FetchedRow[][] {
    const { priorityBands, consumerPoll } = this.o.ctx.config
    const perBatch = consumerPoll.maxBatchMessages
    const limit = perBatch * count
    const byBand: FetchedRow[][] = priorityBands.map(() => [])
    const perPriority = new Array<number>(PRIORITY_LEVELS).fill(0)
    for (const row of rows) {
      byBand[bandIndexOf(priorityBands, row.priority)].push(row)
      perPriority[row.priority]++
    }
    const left = [...perPriority]
    const budgets = splitBatchAcrossBands(priorityBands, perBatch)
    const cursor = byBand.map(() => 0)
    const out: FetchedRow[][] = []
    while (out.length < count) {
      if (out.length > 0 && perPriority.some((n, p) => n >= limit && left[p] < perBatch)) break
      const takes = redistributeUnused(budgets, byBand.map((b, i) => b.length - cursor[i]))
      const chosen: FetchedRow[] = []
      let bytes = 0
      bands: for (let band = 0; band < byBand.length; band++) {
        for (let k = 0; k < takes[band]; k++) {
          const row = byBand[band][cursor[band]]
          bytes += row.payloadBytes
          if (chosen.length > 0 && bytes > this.o.maxBytesPerPartition) break bands
          chosen.push(row)
          cursor[band]++
          left[row.priority]--
        }
      }
      if (chosen.length === 0) break
      out.push(chosen)
    }
    return out
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
        const target = seq
        await this.serially(() =>
          commitOffsets(ctx.db.pool, ctx.tables, groupId, [{ topicId: state.topicId, partition: state.partition, offset: target.toString() }], {
            lockOwner: membership.lockOwner,
            exact: true,
          }),
        )
      }
    }
  }

  private async processAll(work: PartitionWork[]): Promise<void> {
    const queue = [...work]
    const unfinished = new Set(work)
    const worker = async () => {
      for (let w = queue.shift(); w && this.running; w = queue.shift()) {
        const { state } = w
        const positions = [...state.positions]
        let done = 0
        for (const delivered of w.batches) {
          if (!this.running) break
          await this.process({ state, delivered })
          done++
          // the rest of the round's batches only while nothing moved the partition (rewind, seek, pause, revoke)
          if (state.revoked || state.pendingSeek !== undefined || this.o.paused.isPaused(state.topic, state.partition)) break
          if (state.positions.some((seq, p) => seq !== positions[p])) break
        }
        // batches left undelivered are fetched again
        if (done < w.batches.length) state.rewind()
        unfinished.delete(w)
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(this.o.concurrency, work.length) }, worker))
    } finally {
      // batches that never ran (stop, or another partition's failure) are fetched again next time
      for (const w of unfinished) w.state.rewind()
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
    let byOffset: Map<string, number> | undefined
    let resolvedUpTo = -1
    const resolveOffset = (offset: string) => {
      byOffset ??= new Map(delivered.map((d, i) => [d.message.offset, i]))
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
    const { autoCommit, autoCommitInterval, autoCommitThreshold } = this.o
    const commitsByPolicy = autoCommit && (autoCommitInterval !== null || autoCommitThreshold !== null)
    try {
      if (eachMessage) {
        for (let i = 0; i < delivered.length; i++) {
          if (!this.running || stale()) break
          const d = delivered[i]
          await eachMessage({ topic: state.topic, partition: state.partition, message: d.message, heartbeat, pause })
          state.resolve(d.seq, d.priority)
          resolvedUpTo = i
          // the cheap checks first: most messages need neither a heartbeat nor a commit
          if (membership.nextDueIn() === 0) await heartbeat()
          if (commitsByPolicy) await this.commitIfNecessary()
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
    // committed while the next batch is processed (in order, behind any commit still in flight); stop(), a
    // rebalance and seeks wait for it
    if (this.o.autoCommit) this.commitInBackground(state)
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

  /** Runs an offset write after every earlier one (their order is their meaning). */
  private serially<T>(write: () => Promise<T>): Promise<T> {
    const run = this.commits.then(write)
    this.commits = run.catch(() => undefined)
    return run
  }

  private throwCommitFailure(): void {
    const failure = this.commitFailure
    if (failure === undefined) return
    this.commitFailure = undefined
    throw failure
  }

  /**
   * The per-batch automatic commit, off the critical path: it runs behind any commit in flight, and batches that
   * finish meanwhile join the one waiting to start (it commits whatever is resolved when it runs).
   */
  private commitInBackground(state: PartitionState): void {
    if (this.queuedCommit) {
      this.queuedCommit.add(state)
      return
    }
    const states = (this.queuedCommit = new Set([state]))
    this.serially(() => {
      this.queuedCommit = undefined
      return this.commitNow([...states])
    }).catch((e: unknown) => (this.commitFailure ??= e))
  }

  /**
   * Commits the resolved progress of these partitions (after any commit still in flight); a partition whose lease
   * we lost is fenced off. Progress resolved while the statement ran stays dirty for the next commit.
   */
  commit(states: PartitionState[]): Promise<void> {
    return this.serially(() => this.commitNow(states))
  }

  private async commitNow(states: PartitionState[]): Promise<void> {
    const { ctx, groupId, membership, emitter, logger } = this.o
    const dirty = states.filter((s) => s.dirty)
    if (dirty.length === 0) return
    const sent = dirty.map((s) => [...s.resolved])
    let rows: Array<{ topicId: string; partition: number; offset: string }>
    try {
      rows = await commitOffsets(
        ctx.db.pool,
        ctx.tables,
        groupId,
        dirty.map((s, i) => ({ topicId: s.topicId, partition: s.partition, priorityPositions: sent[i] })),
        // at-least-once needs no WAL flush here: a commit lost in a server crash means redelivery (decision 004)
        { lockOwner: membership.lockOwner, exact: false, durable: false },
      )
    } catch (e) {
      throw toKafkaJSError(e, 'commit offsets')
    }
    this.lastCommitAt = Date.now()
    const done = new Set(rows.map((r) => `${r.topicId}:${r.partition}`))
    dirty.forEach((s, i) => {
      if (done.has(`${s.topicId}:${s.partition}`)) {
        if (s.resolved.every((seq, p) => seq === sent[i][p])) s.committed()
      } else {
        logger.warn('Commit refused: another member holds this partition now', { groupId, topic: s.topic, partition: s.partition })
        s.revoked = true
      }
    })
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
      done = await this.serially(() => commitOffsets(ctx.db.pool, ctx.tables, groupId, wanted, { lockOwner: membership.lockOwner, exact: true }))
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

import type { EachBatchHandler, EachMessageHandler, Logger, RetryOptions } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { bandIndexOf } from '../config/priorityBands.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { isRebalancing, protocolError } from '../kafkajs/protocolErrors.js'
import { consumerEvents, type InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { createRetrier, isRetriableHandlerError } from '../kafkajs/retry.js'
import type { BatchObserver } from '../ops/hooks.js'
import { createBatch, type DeliveredMessage } from './batch.js'
import type { FetchManager, PartitionWork } from './fetchManager.js'
import type { GroupMembership } from './groupMembership.js'
import type { OffsetManager } from './offsetManager.js'
import type { PartitionState } from './partitionState.js'
import type { PauseRegistry } from './pauseRegistry.js'

export interface RunnerOptions {
  ctx: PgQueueContext
  membership: GroupMembership
  fetcher: FetchManager
  offsets: OffsetManager
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
  retry: RetryOptions
  onCrash: (error: Error) => void
  /** told about every handled batch (queue-time metrics); a throwing observer is ignored */
  observers?: ReadonlySet<BatchObserver>
}

/** Shortest idle sleep between empty fetch rounds. */
const MIN_IDLE_MS = 5
/**
 * The consume loop, orchestration only: between rounds the member heartbeats (and rebalances), the fetch manager
 * fetches a round and runs its batches through eachMessage / eachBatch, the offset manager commits. When there is
 * nothing to do it sleeps until a NOTIFY, a group change or maxWaitTimeInMs. Handler failures follow KafkaJS:
 * commit what was resolved, refetch from there with backoff, and crash once the retries are spent.
 */
export class Runner {
  running = false
  private loop?: Promise<void>
  private wake?: () => void
  private notified = false
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
    await membership.sync({ force: true })
    this.running = true
    const retrier = createRetrier(this.o.retry)
    this.loop = retrier(async (bail) => {
      try {
        await this.consume()
      } catch (e) {
        if (!this.running) return
        // the cause stays reachable (e.g. a typed protocol error refusing the group), as in KafkaJS's crashes
        const err = isRetriableHandlerError(e) ? (e as Error) : Object.assign(new KafkaJSNonRetriableError(e as Error), { cause: e })
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
    this.o.fetcher.discardPrefetch()
    if (!wasRunning) return
    try {
      await this.o.offsets.commitIfAuto()
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
      this.o.offsets.throwFailure()
      await this.o.membership.sync()
      if (!this.running) return
      const batches = await this.fetchRound()
      if (batches.length === 0) {
        // without LISTEN no staging COMMIT is heard: idle rounds drive the outbox numbering
        if (!this.o.ctx.wakeups.listening) this.o.ctx.outbox.poll()
        // KafkaJS heartbeats after a fetch that came back empty once maxWaitTimeInMs passed; woken early, the loop
        // fetches again instead
        if (!this.notified && (await this.idle())) await this.o.membership.sync({ heartbeat: true })
        continue
      }
      try {
        await this.processAll(batches)
        // the fetch read every row its partitions had: with LISTEN up, a fetch now would come back empty unless a
        // NOTIFY said otherwise since it was sent (poke), so wait for one as after an empty fetch
        if (this.o.fetcher.lastRoundDrained && this.o.ctx.wakeups.listening && !this.notified && this.running) {
          if (await this.idle()) await this.o.membership.sync({ heartbeat: true })
        }
      } catch (e) {
        if (!isRebalancing(e)) throw e
        // what was resolved is committed (process() did that); the next sync takes the new generation
        this.o.logger.warn('The group is rebalancing, re-joining', {
          groupId: this.o.groupId,
          memberId: this.o.membership.memberId,
          error: (e as Error).message,
        })
        this.o.membership.markChanged()
      }
    }
  }

  /** Sleeps until new work may be there (resolves false) or the empty poll's wait is over (true). */
  private idle(): Promise<boolean> {
    const { ctx, maxWaitTimeInMs, membership } = this.o
    // without a live LISTEN connection, poll at DataHub's empty-poll pace instead
    const wait = ctx.wakeups.listening ? maxWaitTimeInMs : Math.min(maxWaitTimeInMs, ctx.config.consumerPoll.emptyPollSleepMs)
    return new Promise<boolean>((resolve) => {
      // a floor, so maxWaitTimeInMs 0 (valid in KafkaJS) polls often without spinning on the database
      const timer = setTimeout(() => done(true), Math.max(MIN_IDLE_MS, Math.min(wait, membership.nextSyncIn())))
      const done = (waited: boolean) => {
        clearTimeout(timer)
        this.wake = undefined
        resolve(waited)
      }
      this.wake = () => done(false)
    })
  }

  private async fetchRound(): Promise<PartitionWork[]> {
    const { membership, paused, fetcher } = this.o
    const held = [...membership.partitions.values()].filter((s) => !s.revoked && !paused.isPaused(s.topic, s.partition))
    // a lease that may have lapsed (the process stalled) is not fetched until a heartbeat renewed it
    const states = held.filter((s) => membership.leaseLive(s))
    if (states.length < held.length) membership.markChanged()
    // only once the assignment is taken: a FETCH fixes a new group's start position for the caller (as on Kafka)
    if (states.length === 0 && membership.settled) fetcher.emptyRound()
    return fetcher.round(states, this.running)
  }

  private processAll(work: PartitionWork[]): Promise<void> {
    return this.o.fetcher.runWorkers(
      work,
      this.o.concurrency,
      (state, delivered) => this.process(state, delivered),
      () => this.running,
      (state) => this.mayDeliver(state),
    )
  }

  /**
   * Right before a batch goes to the handler: nothing is handed out on a lease that may have lapsed (the batches
   * before it in the round heartbeat when due, as KafkaJS does after each batch), nor once the group moved to a
   * generation this member has not taken.
   */
  private async mayDeliver(state: PartitionState): Promise<boolean> {
    const { paused, membership } = this.o
    if (paused.isPaused(state.topic, state.partition)) return false
    return membership.leaseLive(state) && !membership.rebalancing && !state.revoked
  }

  private async process(state: PartitionState, delivered: DeliveredMessage[]): Promise<void> {
    const { emitter, eachMessage, eachBatch, membership, offsets } = this.o
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
    // as KafkaJS's: a heartbeat that finds the group rebalancing commits what was resolved and throws
    // REBALANCE_IN_PROGRESS out of the handler; the runner takes the new generation instead of crashing
    const payloadHeartbeat = async () => {
      await heartbeat()
      if (membership.rebalancing) throw protocolError('REBALANCE_IN_PROGRESS')
    }
    const stale = () => state.pendingSeek !== undefined || state.revoked || membership.rebalancing || !membership.leaseLive(state)
    const { autoCommit, autoCommitInterval, autoCommitThreshold } = this.o
    const commitsByPolicy = autoCommit && (autoCommitInterval !== null || autoCommitThreshold !== null)
    state.startBatch(delivered)
    try {
      if (eachMessage) {
        for (let i = 0; i < delivered.length; i++) {
          if (!this.running || stale()) break
          const d = delivered[i]
          state.handOut(d.seq, d.priority)
          await eachMessage({ topic: state.topic, partition: state.partition, message: d.message, heartbeat: payloadHeartbeat, pause })
          state.resolve(d.seq, d.priority)
          resolvedUpTo = i
          // the cheap checks first: most messages need neither a heartbeat nor a commit
          if (membership.heartbeatDue()) await heartbeat()
          if (commitsByPolicy) await offsets.commitIfNecessary()
          if (this.o.paused.isPaused(state.topic, state.partition)) break
        }
      } else if (eachBatch) {
        for (const d of delivered) state.handOut(d.seq, d.priority)
        await eachBatch({
          batch,
          resolveOffset,
          heartbeat: payloadHeartbeat,
          pause,
          commitOffsetsIfNecessary: async (offsets) => {
            if (offsets) await this.o.offsets.commitExplicit(offsets.topics)
            else await this.o.offsets.commitIfNecessary()
          },
          uncommittedOffsets: () => offsets.uncommittedOffsets(),
          isRunning: () => this.running,
          isStale: stale,
        })
        if (this.o.eachBatchAutoResolve) resolveOffset(batch.lastOffset())
      }
    } catch (e) {
      await offsets.commitIfAuto([state])
      state.rewind()
      throw e
    }
    // as KafkaJS's next offset: the next fetch starts after the last resolved message, so messages left
    // unresolved (a partial eachBatch, pause, seek, stop, revoked) are delivered again
    if (resolvedUpTo < delivered.length - 1) state.rewind()
    emitter.emit(consumerEvents.END_BATCH_PROCESS, { ...info, duration: Date.now() - startedAt })
    this.observe(state, delivered, startedAt)
    // committed while the next batch is processed (in order, behind any commit still in flight); stop(), a
    // rebalance and seeks wait for it
    offsets.commitInBackground(state)
    // KafkaJS heartbeats after every batch (when heartbeatInterval has passed)
    await membership.heartbeatIfDue()
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
}

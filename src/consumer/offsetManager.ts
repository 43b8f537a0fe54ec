import type { Logger, TopicOffsets } from 'kafkajs'
import { toKafkaJSError } from '../db/pgErrors.js'
import { consumerEvents, type InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { traceSettle } from '../tracing/messaging.js'
import type { ReadRange } from '../store/readBounds.js'
import type { PartitionState } from './partitionState.js'
import { rangeFor, ServerClock } from './readFloors.js'

/** One partition's offset write: the exact offset (next to read), or processed-through seqs per priority. */
export interface OffsetWrite {
  topicId: string
  partition: number
  offset?: string
  priorityPositions?: readonly bigint[]
  metadata?: string | null
}

export interface WrittenOffset {
  topicId: string
  partition: number
  offset: string
}

/**
 * Where offsets go (store/offsets.ts in production, a fake in unit tests). A write is fenced: only partitions this
 * member still holds are written, and only those come back. `exact` may move an offset back (seek, explicit
 * commits); otherwise it only advances. `durable: false` = no WAL flush wait (decision 004).
 */
export interface OffsetWriter {
  /** `range`: the enqueued_at range the rows above every commit's priorityPositions lie in (readFloors.ts) */
  write(commits: OffsetWrite[], opts: { exact: boolean; durable: boolean; range?: ReadRange }): Promise<WrittenOffset[]>
  topicIds(topics: string[]): Promise<Map<string, string>>
}

/** The member's side of the group, as the offset manager needs it. */
export interface OffsetOwner {
  readonly memberId: string
  readonly generation: number
  readonly partitions: ReadonlyMap<string, PartitionState>
  topicName(topicId: string): string | undefined
}

export interface OffsetManagerOptions {
  writer: OffsetWriter
  owner: OffsetOwner
  groupId: string
  autoCommit: boolean
  autoCommitInterval: number | null
  autoCommitThreshold: number | null
  emitter: InstrumentationEmitter<typeof consumerEvents>
  logger: Logger
  now?: () => number
}

/**
 * Every offset write of a member, in one place, as KafkaJS's offset manager: the per-batch automatic commit (in
 * the background), commits by interval / threshold, explicit commits (consumer.commitOffsets and
 * commitOffsetsIfNecessary(offsets)), the commit of a seek, the commit before a partition is revoked, and what a
 * refused write means (the partition is no longer ours: stop delivering it). Writes run one after another, in
 * the order they were asked for: a later commit must never land before an earlier one.
 */
export class OffsetManager {
  private chain: Promise<unknown> = Promise.resolve()
  private queued?: Set<PartitionState>
  private failure?: unknown
  private lastCommitAt: number
  private readonly now: () => number
  /** the server's clock as this member's fetches saw it (FetchManager keeps it; commits bound their probes by it) */
  readonly clock = new ServerClock()

  constructor(private readonly o: OffsetManagerOptions) {
    this.now = o.now ?? (() => performance.now())
    this.lastCommitAt = this.now()
  }

  private get held(): PartitionState[] {
    return [...this.o.owner.partitions.values()]
  }

  /** A background commit failed: thrown at the runner's next step (KafkaJS's retry policy applies there). */
  throwFailure(): void {
    const failure = this.failure
    if (failure === undefined) return
    this.failure = undefined
    throw failure
  }

  /** Resolves once every write asked for so far has finished. */
  async drain(): Promise<void> {
    await this.chain
  }

  /**
   * The per-batch automatic commit, off the critical path: it runs behind any write in flight, and batches that
   * finish meanwhile join the one waiting to start (it commits whatever is resolved when it runs). It starts no
   * sooner than the next turn of the event loop, so the batches of one fetch that a quick handler finishes in the
   * same turn share one commit instead of two (the first alone, the rest behind it): a commit is a write
   * transaction of its own on the server, and was half of a keeping-up consumer's statements (issue 36).
   */
  commitInBackground(state: PartitionState): void {
    if (!this.o.autoCommit) return
    if (this.queued) {
      this.queued.add(state)
      return
    }
    const states = (this.queued = new Set([state]))
    this.serially(async () => {
      await new Promise((resolve) => setImmediate(resolve))
      this.queued = undefined
      return this.commitResolved([...states])
    }).catch((e: unknown) => (this.failure ??= e))
  }

  /** autoCommitInterval / autoCommitThreshold (commitOffsetsIfNecessary() and between messages). */
  async commitIfNecessary(): Promise<void> {
    const { autoCommit, autoCommitInterval, autoCommitThreshold } = this.o
    if (!autoCommit) return
    const states = this.held
    const pending = states.reduce((n, s) => n + s.uncommitted, 0)
    const dueByTime = autoCommitInterval !== null && this.now() - this.lastCommitAt >= autoCommitInterval
    const dueByCount = autoCommitThreshold !== null && pending >= autoCommitThreshold
    if (dueByTime || dueByCount) await this.commit(states)
  }

  /** What a handler failure, stop() or a revocation commits: the resolved progress, when autoCommit is on. */
  async commitIfAuto(states: PartitionState[] = this.held): Promise<void> {
    if (this.o.autoCommit) await this.commit(states)
  }

  /** Commits the resolved progress of these partitions, after any write still in flight. */
  commit(states: PartitionState[]): Promise<void> {
    return this.serially(() => this.commitResolved(states))
  }

  /** A seek moves the committed offset too (autoCommit), exactly, as KafkaJS's seek does. */
  async commitSeek(state: PartitionState, seq: bigint): Promise<void> {
    if (!this.o.autoCommit) return
    await this.serially(() => this.write([{ topicId: state.topicId, partition: state.partition, offset: seq.toString() }], true, true))
  }

  /** A start position reset (STUCK_AHEAD): stored exactly, whatever autoCommit says. */
  async commitReset(topicId: string, partition: number, offset: string): Promise<void> {
    await this.serially(() => this.write([{ topicId, partition, offset }], true, true))
  }

  /**
   * consumer.commitOffsets / commitOffsetsIfNecessary(offsets): these offsets, exactly (they may move back). On a
   * partition this member holds the commit becomes per-priority positions that never pass a message the handler was
   * not given (PartitionState.explicitPositions); if that stores less than asked, it says so. A partition the
   * member does not hold (any more) is refused: REBALANCE_IN_PROGRESS, as Kafka answers a fenced member.
   */
  async commitExplicit(topics: TopicOffsets[]): Promise<void> {
    const { owner, groupId, logger } = this.o
    const ids = await this.o.writer.topicIds(topics.map((t) => t.topic))
    const wanted: OffsetWrite[] = []
    for (const t of topics) {
      const topicId = ids.get(t.topic)
      if (topicId === undefined) continue
      for (const p of t.partitions) {
        const offset = String(p.offset)
        const metadata = (p as { metadata?: string | null }).metadata ?? null
        const state = owner.partitions.get(`${t.topic}:${p.partition}`)
        wanted.push(
          state
            ? { topicId, partition: p.partition, priorityPositions: state.explicitPositions(BigInt(offset)), metadata, offset }
            : { topicId, partition: p.partition, offset, metadata },
        )
      }
    }
    const done = await this.serially(() =>
      this.write(
        wanted.map((w) => (w.priorityPositions ? { ...w, offset: undefined } : w)),
        true,
        true,
      ),
    )
    for (const r of done) {
      const asked = wanted.find((w) => w.topicId === r.topicId && w.partition === r.partition)
      const state = this.stateOf(r.topicId, r.partition)
      state?.committed()
      if (asked?.offset !== undefined && BigInt(r.offset) < BigInt(asked.offset)) {
        logger.warn('Explicit commit clamped: messages below the requested offset were passed over by priority and not handled yet', {
          groupId,
          topic: state?.topic,
          partition: r.partition,
          requested: asked.offset,
          stored: r.offset,
        })
      }
    }
    const refused = wanted.filter((c) => !done.some((r) => r.topicId === c.topicId && r.partition === c.partition))
    if (refused.length === 0) return
    for (const c of refused) this.revoke(this.stateOf(c.topicId, c.partition))
    logger.warn('Commit refused: this member does not hold these partitions (any more)', {
      groupId,
      partitions: refused.map((c) => `${owner.topicName(c.topicId) ?? c.topicId}:${c.partition}`),
    })
    throw protocolError('REBALANCE_IN_PROGRESS')
  }

  /** eachBatch's uncommittedOffsets(): the next offset after what was resolved, per dirty partition. */
  uncommittedOffsets(): { topics: TopicOffsets[] } {
    const dirty = this.held.filter((s) => s.dirty)
    return { topics: groupByTopic(dirty.map((s) => ({ topic: s.topic, partition: s.partition, offset: s.resolvedOffset() }))) }
  }

  private stateOf(topicId: string, partition: number): PartitionState | undefined {
    return this.held.find((s) => s.topicId === topicId && s.partition === partition)
  }

  private revoke(state: PartitionState | undefined): void {
    if (state) state.revoked = true
  }

  /** Progress resolved while the statement ran stays dirty for the next commit; a refused partition is revoked. */
  private async commitResolved(states: PartitionState[]): Promise<void> {
    const dirty = states.filter((s) => s.dirty && !s.revoked)
    if (dirty.length === 0) return
    const sent = dirty.map((s) => [...s.resolved])
    const rows = await this.write(
      dirty.map((s, i) => {
        const known = s.readFloors.watermarkFor(sent[i])
        return {
          topicId: s.topicId,
          partition: s.partition,
          priorityPositions: sent[i],
          ...(known === undefined ? {} : { offset: known.toString() }),
        }
      }),
      false,
      false,
    )
    this.lastCommitAt = this.now()
    const done = new Set(rows.map((r) => `${r.topicId}:${r.partition}`))
    dirty.forEach((s, i) => {
      if (done.has(`${s.topicId}:${s.partition}`)) {
        if (s.resolved.every((seq, p) => seq === sent[i][p])) s.committed()
      } else {
        this.o.logger.warn('Commit refused: another member holds this partition now', {
          groupId: this.o.groupId,
          topic: s.topic,
          partition: s.partition,
        })
        this.revoke(s)
      }
    })
  }

  /**
   * The enqueued_at range of the rows above the commits' per-priority positions, from the partitions' read floors
   * (readFloors.ts), so the watermark's probes touch only the time partitions that can hold them; undefined =
   * unbounded (a partition without a floor at or below its positions, or one this member does not hold).
   */
  private rangeOf(commits: OffsetWrite[]): ReadRange | undefined {
    const bounds = []
    for (const c of commits) {
      if (!c.priorityPositions || c.offset !== undefined) continue
      const state = this.stateOf(c.topicId, c.partition)
      if (!state) return undefined
      bounds.push(state.readFloors.boundsFor(c.priorityPositions, this.clock.epoch))
    }
    return rangeFor(bounds, this.clock)
  }

  /** One fenced write (callers run it serially), announced by COMMIT_OFFSETS when anything was written. */
  private async write(commits: OffsetWrite[], exact: boolean, durable: boolean): Promise<WrittenOffset[]> {
    if (commits.length === 0) return []
    let rows: WrittenOffset[]
    try {
      const topics = commits.map((c) => this.o.owner.topicName(c.topicId) ?? c.topicId)
      const range = this.rangeOf(commits)
      rows = await traceSettle(this.o.groupId, topics, () => this.o.writer.write(commits, { exact, durable, ...(range ? { range } : {}) }))
    } catch (e) {
      throw toKafkaJSError(e, 'commit offsets')
    }
    const { owner, groupId, emitter } = this.o
    if (rows.length > 0) {
      emitter.emit(consumerEvents.COMMIT_OFFSETS, {
        groupId,
        memberId: owner.memberId,
        groupGenerationId: owner.generation,
        topics: groupByTopic(rows.map((r) => ({ topic: owner.topicName(r.topicId) ?? r.topicId, partition: r.partition, offset: r.offset }))),
      })
    }
    return rows
  }

  /** Runs after every earlier write (their order is their meaning); a failed write does not block later ones. */
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work)
    this.chain = run.catch(() => undefined)
    return run
  }
}

/**
 * KafkaJS builds these lists (uncommittedOffsets(), the COMMIT_OFFSETS event) from objects keyed by partition: its
 * partitions are strings, in ascending order. The declared type says number; the value is KafkaJS's.
 */
function groupByTopic(entries: Array<{ topic: string; partition: number; offset: string }>): TopicOffsets[] {
  const byTopic = new Map<string, Array<{ partition: number; offset: string }>>()
  for (const e of entries) {
    let t = byTopic.get(e.topic)
    if (!t) byTopic.set(e.topic, (t = []))
    t.push({ partition: e.partition, offset: e.offset })
  }
  return [...byTopic].map(([topic, partitions]) => ({
    topic,
    partitions: partitions
      .sort((a, b) => a.partition - b.partition)
      .map((p) => ({ partition: String(p.partition) as unknown as number, offset: p.offset })),
  }))
}

import { PRIORITY_LEVELS } from '../store/fetch.js'
import { ReadFloors } from './readFloors.js'

/** Kafka offset of a pgQueue seq: offset = seq - 1; a committed offset (next to read) = last processed seq. */
export const offsetOfSeq = (seq: string | bigint): string => (BigInt(seq) - 1n).toString()

const filled = (seq: bigint): bigint[] => Array.from({ length: PRIORITY_LEVELS }, () => seq)
const maxOf = (values: readonly bigint[]): bigint => values.reduce((a, b) => (b > a ? b : a))

/**
 * What a member knows about one partition it holds. With priorities a partition is read in priority order, so
 * progress is kept per priority: `positions` = fetched through, `handedOut` = given to the handler through,
 * `resolved` = processed through (resolved <= handedOut <= positions, per priority).
 */
export class PartitionState {
  positions: bigint[]
  handedOut: bigint[]
  resolved: bigint[]
  /** resolved messages not yet committed (autoCommitThreshold) */
  uncommitted = 0
  dirty = false
  /** a seek waiting to be applied before the next fetch; makes the in-flight batch stale */
  pendingSeek?: bigint
  /** the member lost this partition (lease taken over, rebalance): stop delivering it */
  revoked = false
  highWatermark = '0'
  /** counts rewinds and seeks: the positions moved back since a fetch (there are rows to read again) */
  moves = 0
  /** enqueued_at bounds of the rows above given positions, so fetches and commits read only the time partitions
   * that can hold them */
  readonly readFloors = new ReadFloors()
  /** monotonic ms until which this member's lease surely holds (GroupMembership.leaseLive) */
  leaseDeadline = 0
  /** the batch last handed to the handler: its delivery order, and each priority's handed-out seq before it */
  private batch?: { before: bigint[]; order: ReadonlyArray<{ seq: bigint; priority: number }> }
  /**
   * This member's earlier state of the partition, when it took the partition again after its own lease lapsed (a
   * handler slower than sessionTimeout): that handler may still commit a message the earlier state handed out.
   */
  private previous?: PartitionState

  constructor(
    readonly topic: string,
    readonly topicId: string,
    readonly partition: number,
    committedSeq: bigint,
    priorityPositions: readonly string[] | null,
  ) {
    this.resolved =
      priorityPositions?.length === PRIORITY_LEVELS
        ? priorityPositions.map((p) => (BigInt(p) > committedSeq ? BigInt(p) : committedSeq))
        : filled(committedSeq)
    this.positions = [...this.resolved]
    this.handedOut = [...this.resolved]
  }

  get key(): string {
    return `${this.topic}:${this.partition}`
  }

  /**
   * Taken again by the member that held it as `earlier`. Only the last state that handed out a batch is kept: while
   * a handler runs no other batch of the partition starts, so a state without one never had a handler to commit.
   */
  succeed(earlier: PartitionState): void {
    this.previous = earlier.batch ? earlier : earlier.previous
    if (this.previous) this.previous.previous = undefined
  }

  /** Records that rows were fetched, so the next fetch continues after them. */
  delivered(seq: bigint, priority: number): void {
    if (seq > this.positions[priority]) this.positions[priority] = seq
  }

  /** A batch is about to be handed out, in this order (band order with priorities, not offset order). */
  startBatch(order: ReadonlyArray<{ seq: bigint; priority: number }>): void {
    this.batch = { before: [...this.handedOut], order }
  }

  /** Records that the handler was given this message (what an explicit commit may cover). */
  handOut(seq: bigint, priority: number): void {
    if (seq > this.handedOut[priority]) this.handedOut[priority] = seq
  }

  resolve(seq: bigint, priority: number): void {
    if (seq > this.resolved[priority]) {
      this.resolved[priority] = seq
      this.uncommitted++
      this.dirty = true
    }
  }

  /**
   * Fetch again from what was processed, so the unprocessed rows are redelivered (KafkaJS's next offset). They count
   * as not handed out any more: an explicit commit must not cover them before they come back (a retried batch's
   * dead-letter move of an urgent message committed past the less urgent messages of the failed attempt).
   */
  rewind(): void {
    this.moves++
    this.positions = [...this.resolved]
    this.handedOut = [...this.resolved]
  }

  /** seek: everything before `seq + 1` counts as processed; rows after it are read again. */
  seekTo(seq: bigint): void {
    this.moves++
    this.positions = filled(seq)
    this.handedOut = filled(seq)
    this.resolved = filled(seq)
    this.batch = undefined
    this.pendingSeek = undefined
    this.dirty = false
    this.uncommitted = 0
  }

  committed(): void {
    this.dirty = false
    this.uncommitted = 0
  }

  /** Positions committed elsewhere (a transaction's sendOffsets): clean when they cover everything resolved. */
  committedThrough(positions: readonly bigint[]): void {
    if (this.resolved.every((seq, p) => seq <= (positions[p] ?? -1n))) this.committed()
  }

  /**
   * Per-priority positions for an explicit commit of `seq` (the Kafka offset N = seq: everything before it is
   * processed). When the message at offset N - 1 is one the current batch handed out, the commit covers that batch's
   * messages up to it in delivery order (a batch in band order ends with its least urgent message, so the usual
   * `lastOffset() + 1` covers the whole batch, and the `offset + 1` of a message covers what came before it).
   * Otherwise a priority whose handed-out position is below both `seq` and the highest seq handed out at any
   * priority had rows passed over by priority order: they never reached the handler, so the commit keeps that
   * priority where it is (docs/decisions/005). A commit past everything this state handed out but of a message the
   * member's earlier state handed out (its lease lapsed and was taken again while the handler ran) is translated by
   * that state. Beyond everything handed out, an explicit commit skips ahead as on Kafka.
   */
  explicitPositions(seq: bigint): bigint[] {
    return this.handedOutThrough(seq) ?? (maxOf(this.handedOut) >= seq ? undefined : this.previous?.handledPositions(seq)) ?? this.outsideBatch(seq)
  }

  /**
   * explicitPositions for a commit that stands for a message handled (a transaction's sendOffsets: a dead-letter move,
   * consume-transform-produce), undefined when this state never handed that message out. A state started afresh
   * (the lease lapsed and was taken again, under the same generation) while the handler ran knows only the committed
   * positions, so explicitPositions' skip-ahead rule would move every priority past `seq`, messages of other
   * priorities never handed out included; such a commit is refused instead, as a fenced one.
   */
  handledPositions(seq: bigint): bigint[] | undefined {
    return this.handedOutThrough(seq) ?? (maxOf(this.handedOut) >= seq ? this.outsideBatch(seq) : undefined)
  }

  /** explicitPositions for a `seq` outside the current batch: passed-over priorities stay, the rest go to `seq`. */
  private outsideBatch(seq: bigint): bigint[] {
    const highest = maxOf(this.handedOut)
    const reached = seq < highest ? seq : highest
    return this.handedOut.map((h) => (h < reached ? h : seq))
  }

  /** Each priority's position once the current batch's messages through `seq` (handed out already) are done. */
  private handedOutThrough(seq: bigint): bigint[] | undefined {
    const batch = this.batch
    const upTo = batch?.order.findIndex((d) => d.seq === seq) ?? -1
    if (upTo < 0 || this.handedOut[batch!.order[upTo].priority] < seq) return undefined
    const positions = [...batch!.before]
    for (const d of batch!.order.slice(0, upTo + 1)) if (d.seq > positions[d.priority]) positions[d.priority] = d.seq
    return positions
  }

  /** The Kafka offset of the next message after everything resolved (for events and uncommittedOffsets). */
  resolvedOffset(): string {
    return maxOf(this.resolved).toString()
  }
}

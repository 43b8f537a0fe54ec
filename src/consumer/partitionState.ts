import { PRIORITY_LEVELS } from '../store/fetch.js'

/** Kafka offset ↔ pgQueue seq: offset = seq - 1; a committed offset (next to read) = last processed seq. */
export const seqOfOffset = (offset: string | bigint): bigint => BigInt(offset) + 1n
export const offsetOfSeq = (seq: string | bigint): string => (BigInt(seq) - 1n).toString()

const filled = (seq: bigint): bigint[] => Array.from({ length: PRIORITY_LEVELS }, () => seq)
const maxOf = (values: readonly bigint[]): bigint => values.reduce((a, b) => (b > a ? b : a))

/**
 * What a member knows about one partition it holds. With priorities a partition is read in priority order, so
 * progress is kept per priority: `positions` = fetched through, `resolved` = processed through.
 */
export class PartitionState {
  positions: bigint[]
  resolved: bigint[]
  /** resolved messages not yet committed (autoCommitThreshold) */
  uncommitted = 0
  dirty = false
  /** a seek waiting to be applied before the next fetch; makes the in-flight batch stale */
  pendingSeek?: bigint
  /** the member lost this partition (lease taken over, rebalance): stop delivering it */
  revoked = false
  highWatermark = '0'

  constructor(
    readonly topic: string,
    readonly topicId: string,
    readonly partition: number,
    committedSeq: bigint,
    priorityPositions: readonly string[] | null,
  ) {
    this.resolved = priorityPositions?.length === PRIORITY_LEVELS
      ? priorityPositions.map((p) => (BigInt(p) > committedSeq ? BigInt(p) : committedSeq))
      : filled(committedSeq)
    this.positions = [...this.resolved]
  }

  get key(): string {
    return `${this.topic}:${this.partition}`
  }

  /** Records that rows were handed out, so the next fetch continues after them. */
  delivered(seq: bigint, priority: number): void {
    if (seq > this.positions[priority]) this.positions[priority] = seq
  }

  resolve(seq: bigint, priority: number): void {
    if (seq > this.resolved[priority]) {
      this.resolved[priority] = seq
      this.uncommitted++
      this.dirty = true
    }
  }

  /** After a failed batch: fetch again from what was processed, so the unprocessed rows are redelivered. */
  rewind(): void {
    this.positions = [...this.resolved]
  }

  /** seek: everything before `seq + 1` counts as processed; rows after it are read again. */
  seekTo(seq: bigint): void {
    this.positions = filled(seq)
    this.resolved = filled(seq)
    this.pendingSeek = undefined
    this.dirty = false
    this.uncommitted = 0
  }

  committed(): void {
    this.dirty = false
    this.uncommitted = 0
  }

  /** The Kafka offset of the next message after everything resolved (for events and uncommittedOffsets). */
  resolvedOffset(): string {
    return maxOf(this.resolved).toString()
  }
}

/** A running consumer's place in its group, as a transaction's sendOffsets needs it to fence its offset commit. */
export interface LocalGroupMember {
  readonly groupId: string
  readonly lockOwner: string
  readonly generation: number
  holds(topicId: string, partition: number): boolean
  /**
   * A commit of `offset` on a held partition as per-priority positions that never pass a message this member was
   * not given (the explicit-commit rule of decision 005); undefined for a partition it does not hold, or when its
   * current state of the partition never handed out the message at `offset - 1` (PartitionState.handledPositions).
   */
  handledPositions(topicId: string, partition: number, offset: bigint): bigint[] | undefined
  /**
   * A transaction's sendOffsets wrote these positions: what the member resolved up to them is no longer listed as
   * uncommitted. KafkaJS's sendOffsets marks the offsets committed in the client's cluster at once, which the
   * consumer's uncommittedOffsets() reads, whether the transaction then commits or aborts.
   */
  committedInTransaction(topicId: string, partition: number, positions: readonly bigint[]): void
}

const members = new WeakMap<object, Set<LocalGroupMember>>()

/**
 * The consumers running on one Kafka client (context). KafkaJS's sendOffsets({ consumerGroupId, topics }) names
 * only the group, so the member whose partitions they are is found here; returns the unregister function.
 */
export function registerLocalMember(ctx: object, member: LocalGroupMember): () => void {
  let set = members.get(ctx)
  if (!set) members.set(ctx, (set = new Set()))
  set.add(member)
  return () => set.delete(member)
}

/** The running member of this group on this client that holds all these partitions, if there is one. */
export function localMemberHolding(
  ctx: object,
  groupId: string,
  partitions: Array<{ topicId: string; partition: number }>,
): LocalGroupMember | undefined {
  for (const m of members.get(ctx) ?? []) {
    if (m.groupId === groupId && partitions.every((p) => m.holds(p.topicId, p.partition))) return m
  }
  return undefined
}

/** Whether any member of this group runs on this client. */
export function hasLocalMember(ctx: object, groupId: string): boolean {
  return [...(members.get(ctx) ?? [])].some((m) => m.groupId === groupId)
}

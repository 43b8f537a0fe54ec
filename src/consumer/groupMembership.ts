import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { consumerEvents } from '../kafkajs/instrumentation.js'
import { acquireLeases, releaseLeases, type PartitionRef } from '../store/leases.js'
import { announceMembershipChange, heartbeat, leaveGroup } from '../store/members.js'
import { claimStartPositions, type StartPosition } from '../store/offsets.js'
import type { TopicRow } from '../store/topics.js'
import { assignPartitions, type MemberAssignment } from './assignment.js'
import { refuseGroupSharedWithDataHub } from './dataHubGuard.js'
import { PartitionState } from './partitionState.js'

export interface Subscription {
  fromBeginning: boolean
}

export interface MembershipOptions {
  ctx: PgQueueContext
  groupId: string
  clientId: string
  sessionTimeout: number
  heartbeatInterval: number
  subscriptions: ReadonlyMap<string, Subscription>
  emitter: InstrumentationEmitter<typeof consumerEvents>
  logger: Logger
  /** commits what was processed on partitions about to be handed to another member */
  beforeRevoke: (states: PartitionState[]) => Promise<void>
  /** stores a reset start position (the offset manager does every offset write) */
  resetStart: (topicId: string, partition: number, offset: string) => Promise<void>
}

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`

/**
 * Consumer-group membership without a coordinator: the member heartbeats into the members table, derives the
 * group's assignment from the live member set (every member computes the same one), and holds a lease on each
 * partition it fetches. A member that stops heartbeating drops out of everyone's live set after its session
 * timeout and its leases lapse, so the others take its partitions over from the last committed offset.
 */
export class GroupMembership {
  readonly memberId: string
  readonly lockOwner: string
  readonly clientHost = hostname()
  generation = 0
  leaderId = ''
  assignment: MemberAssignment = {}
  /** partitions this member holds the lease of */
  readonly partitions = new Map<string, PartitionState>()
  /** seeks for partitions not held yet, applied when they are */
  readonly pendingSeeks = new Map<string, string>()
  /** assigned but still leased by their previous owner */
  private pending: PartitionRef[] = []
  private topicRows = new Map<string, TopicRow>()
  private liveKey = ''
  private lastBeat = 0
  private needsSync = true
  private serial: Promise<unknown> = Promise.resolve()

  constructor(private readonly o: MembershipOptions) {
    const uuid = randomUUID()
    this.memberId = `${o.clientId}-${uuid}`
    this.lockOwner = `${o.groupId}:${uuid}`
  }

  get topicIds(): string[] {
    return [...this.topicRows.values()].map((r) => r.id)
  }

  topicName(topicId: string): string | undefined {
    for (const row of this.topicRows.values()) if (row.id === topicId) return row.name
    return undefined
  }

  /** The subscription's reset rule for a topic: true = earliest, false = latest. */
  fromBeginning(topic: string): boolean {
    return this.o.subscriptions.get(topic)?.fromBeginning ?? false
  }

  /** Someone joined or left: re-read the group at the next opportunity. */
  markChanged(): void {
    this.needsSync = true
  }

  /** ms until this member must beat again (or retry partitions still held by their previous owner). */
  nextDueIn(): number {
    const beat = Math.max(0, this.o.heartbeatInterval - (Date.now() - this.lastBeat))
    return this.needsSync ? 0 : this.pending.length > 0 ? Math.min(beat, 200) : beat
  }

  /** Between fetch rounds (no batch in flight): beat, rebalance if the live set changed, take and renew leases. */
  sync(force = false): Promise<void> {
    return this.serialized(async () => {
      if (!force && !this.needsSync && this.nextDueIn() > 0) return
      await this.beat(true)
    })
  }

  /** From inside a batch (payload.heartbeat, between messages): beat and renew leases, but never rebalance. */
  heartbeatIfDue(): Promise<void> {
    return this.serialized(async () => {
      if (Date.now() - this.lastBeat < this.o.heartbeatInterval) return
      await this.beat(false)
    })
  }

  async leave(): Promise<void> {
    const { ctx, groupId } = this.o
    await leaveGroup(ctx.db.pool, ctx.tables, groupId, this.memberId, this.lockOwner)
    for (const state of this.partitions.values()) state.revoked = true
    this.partitions.clear()
  }

  private serialized(fn: () => Promise<void>): Promise<void> {
    const next = this.serial.then(fn, fn)
    this.serial = next.catch(() => undefined)
    return next
  }

  private async beat(mayRebalance: boolean): Promise<void> {
    const { ctx, groupId, emitter } = this.o
    const started = Date.now()
    const db = ctx.db
    this.needsSync = false
    this.topicRows = await ctx.topics.get(db, [...this.o.subscriptions.keys()])
    await refuseGroupSharedWithDataHub(ctx, groupId, this.topicIds)
    const me = { memberId: this.memberId, topics: [...this.topicRows.keys()] }
    const others = await heartbeat(db.pool, ctx.tables, {
      group: groupId,
      memberId: this.memberId,
      clientId: this.o.clientId,
      clientHost: this.clientHost,
      topics: me.topics,
      topicIds: this.topicIds,
      sessionTimeoutMs: this.o.sessionTimeout,
    })
    this.lastBeat = Date.now()
    const members = [...others, me]
    const counts = new Map([...this.topicRows.values()].map((r) => [r.name, r.partitionCount]))
    const liveKey = JSON.stringify([members.map((m) => [m.memberId, m.topics]).sort(), [...counts].sort()])
    const changed = liveKey !== this.liveKey
    if (changed && !mayRebalance) this.needsSync = true
    const rebalance = changed && mayRebalance
    const firstJoin = this.liveKey === ''
    if (rebalance) {
      if (this.liveKey !== '') emitter.emit(consumerEvents.REBALANCING, { groupId, memberId: this.memberId })
      this.liveKey = liveKey
      this.generation++
      this.leaderId = members.map((m) => m.memberId).sort()[0]
      this.assignment = assignPartitions(members, counts).get(this.memberId) ?? {}
      await this.revokeUnassigned()
    }
    await this.renewLeases()
    // wake the rest of the group so it rebalances now rather than at its next heartbeat
    if (rebalance && firstJoin) await announceMembershipChange(db.pool, ctx.tables, groupId)
    emitter.emit(consumerEvents.HEARTBEAT, { groupId, memberId: this.memberId, groupGenerationId: this.generation })
    if (rebalance) {
      emitter.emit(consumerEvents.GROUP_JOIN, {
        groupId,
        memberId: this.memberId,
        leaderId: this.leaderId,
        isLeader: this.leaderId === this.memberId,
        memberAssignment: this.assignment,
        groupProtocol: 'RoundRobinAssigner',
        duration: Date.now() - started,
      })
    }
  }

  private async revokeUnassigned(): Promise<void> {
    const lost = [...this.partitions.values()].filter((s) => !this.assignment[s.topic]?.includes(s.partition))
    if (lost.length === 0) return
    const { ctx, groupId } = this.o
    await this.o.beforeRevoke(lost)
    await releaseLeases(ctx.db.pool, ctx.tables, groupId, this.lockOwner, lost)
    for (const s of lost) {
      s.revoked = true
      this.partitions.delete(s.key)
    }
    // the new owners are waiting for these leases: wake them
    await announceMembershipChange(ctx.db.pool, ctx.tables, groupId)
  }

  private async renewLeases(): Promise<void> {
    const { ctx, groupId } = this.o
    const wanted: Array<PartitionRef & { topic: string }> = []
    for (const [topic, partitions] of Object.entries(this.assignment)) {
      const row = this.topicRows.get(topic)
      if (row) for (const partition of partitions) wanted.push({ topic, topicId: row.id, partition })
    }
    const held = await acquireLeases(ctx.db.pool, ctx.tables, groupId, this.lockOwner, this.o.sessionTimeout, wanted)
    const heldKeys = new Set(held.map((h) => `${h.topicId}:${h.partition}`))
    // a lease we had but no longer hold lapsed and was taken over (we were too slow): stop delivering it
    for (const state of this.partitions.values()) {
      if (!heldKeys.has(`${state.topicId}:${state.partition}`)) {
        this.o.logger.warn('Lost the lease of a partition to another member', { groupId, topic: state.topic, partition: state.partition })
        state.revoked = true
        this.partitions.delete(state.key)
      }
    }
    const fresh = wanted.filter((w) => heldKeys.has(`${w.topicId}:${w.partition}`) && !this.partitions.has(keyOf(w.topic, w.partition)))
    this.pending = wanted.filter((w) => !heldKeys.has(`${w.topicId}:${w.partition}`))
    if (fresh.length > 0) await this.start(fresh)
  }

  /** Where to start on partitions just taken: the committed offset, reset when it is past the end of the log. */
  private async start(fresh: Array<PartitionRef & { topic: string }>): Promise<void> {
    const { ctx, groupId, logger } = this.o
    const claims = fresh.map((f) => ({ ...f, fromBeginning: this.fromBeginning(f.topic) }))
    const positions = await claimStartPositions(ctx.db.pool, ctx.tables, groupId, claims)
    for (const pos of positions) {
      const claim = claims.find((c) => c.topicId === pos.topicId && c.partition === pos.partition)!
      const committed = await this.checkedStart(pos, claim)
      const state = new PartitionState(claim.topic, pos.topicId, pos.partition, committed, pos.priorityPositions)
      state.highWatermark = pos.high
      const seek = this.pendingSeeks.get(state.key)
      if (seek !== undefined) {
        this.pendingSeeks.delete(state.key)
        state.pendingSeek = BigInt(seek)
      }
      this.partitions.set(state.key, state)
      logger.debug('Took partition', { groupId, topic: claim.topic, partition: pos.partition, committed: committed.toString() })
    }
  }

  /**
   * A committed offset past the log end (a database restored from backup, a manual reset) would leave the
   * consumer silently receiving nothing (DataHub's STUCK_AHEAD). Reset it as Kafka does an out-of-range offset:
   * to the low or high watermark, per fromBeginning, and say so.
   */
  private async checkedStart(pos: StartPosition, claim: { topic: string; fromBeginning: boolean }): Promise<bigint> {
    const committed = BigInt(pos.committed)
    if (committed <= BigInt(pos.high)) return committed
    const { groupId, logger } = this.o
    const reset = claim.fromBeginning ? pos.low : pos.high
    logger.warn('Committed offset is past the end of the log (STUCK_AHEAD); resetting it', {
      groupId,
      topic: claim.topic,
      partition: pos.partition,
      committedOffset: pos.committed,
      highWatermark: pos.high,
      resetTo: reset,
    })
    await this.o.resetStart(pos.topicId, pos.partition, reset)
    return BigInt(reset)
  }
}

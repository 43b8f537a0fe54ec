import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Assigner, Logger } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { againIfTopicDeleted, sqlState } from '../db/pgErrors.js'
import type { LocalGroupMember } from '../client/groupMembers.js'
import type { InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { consumerEvents } from '../kafkajs/instrumentation.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import type { GenerationRow } from '../store/groupGeneration.js'
import type { NetworkInstrumentation } from '../kafkajs/networkEvents.js'
import type { PartitionRef } from '../store/leases.js'
import type { MemberRow } from '../store/members.js'
import { claimStartPositions, type StartPosition } from '../store/offsets.js'
import type { TopicRow } from '../store/topics.js'
import { chooseProtocol, decodeAssignment, runAssigner, type GroupMemberOffer } from './assigners.js'
import type { MemberAssignment } from './assignment.js'
import { refuseGroupSharedWithDataHub } from './dataHubGuard.js'
import { PartitionState } from './partitionState.js'

const FOREIGN_KEY_VIOLATION = '23503'

export interface Subscription {
  fromBeginning: boolean
}

export interface MembershipOptions {
  ctx: PgQueueContext
  groupId: string
  clientId: string
  sessionTimeout: number
  heartbeatInterval: number
  /** cached topic rows older than this are read again (new partitions, topics deleted or re-created elsewhere) */
  metadataMaxAge: number
  subscriptions: ReadonlyMap<string, Subscription>
  /** the configured partitionAssigners, in preference order */
  assigners: readonly Assigner[]
  emitter: InstrumentationEmitter<typeof consumerEvents>
  /** names the round trips of a heartbeat (consumer.network.* events) */
  network: NetworkInstrumentation
  logger: Logger
  /** commits what was processed on partitions about to be handed to another member */
  beforeRevoke: (states: PartitionState[]) => Promise<void>
  /** stores a reset start position (the offset manager does every offset write) */
  resetStart: (topicId: string, partition: number, offset: string) => Promise<void>
  /** monotonic ms (performance.now()); liveness never follows the wall clock */
  now?: () => number
}

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`
/** how often a member waiting for the leader's assignment, or for a partition's previous owner, looks again */
const RETRY_MS = 200

/**
 * Consumer-group membership without a coordinator (docs/decisions/006): members heartbeat into the members table;
 * the oldest live member leads and, whenever the members, their subscriptions or the partition counts change,
 * runs the group's assigner and writes the next generation with everyone's assignment; each member takes exactly
 * what the leader gave it and holds a lease per partition, stamped with the generation. Fetches, commits and
 * transactional offset commits check that lease in SQL, so a member that stalled past its session (its lease
 * lapsed, or the generation moved on) can neither read nor commit any more.
 */
export class GroupMembership implements LocalGroupMember {
  readonly memberId: string
  readonly lockOwner: string
  readonly clientHost = hostname()
  generation = 0
  leaderId = ''
  protocol = ''
  assignment: MemberAssignment = {}
  /** partitions this member holds the lease of */
  readonly partitions = new Map<string, PartitionState>()
  /** seeks for partitions not held yet, applied when they are */
  readonly pendingSeeks = new Map<string, string>()
  /** states dropped because this member took their partition's lapsed lease again, until the partition restarts */
  private readonly reacquired = new Map<string, PartitionState>()
  /** assigned but still leased by their previous owner */
  private pending: PartitionRef[] = []
  private topicRows = new Map<string, TopicRow>()
  /** partition counts of every topic some live member subscribes to (the leader's assigner sees these) */
  private groupCounts = new Map<string, number>()
  /** when the member last wrote its heartbeat row (any beat: a join, a rebalance, a heartbeat) */
  private lastBeat = -Infinity
  /**
   * when the last KafkaJS heartbeat ended (its HEARTBEAT event): heartbeatInterval counts from here, as KafkaJS's
   * lastRequest, which starts when the consumer group is made and which joins do not move
   */
  private lastHeartbeat: number
  private needsSync = true
  private waitingForLeader = false
  /** the group's current generation is not the one this member holds its leases in */
  private generationMoved = false
  private announced = false
  /** leave() was called: a beat still waiting (for DataHub consumers to go) registers nothing */
  private left = false
  private offered?: Array<{ name: string; metadata: Buffer }>
  private serial: Promise<unknown> = Promise.resolve()
  private readonly now: () => number
  private sharedBeat?: Promise<void>

  constructor(private readonly o: MembershipOptions) {
    const uuid = randomUUID()
    this.memberId = `${o.clientId}-${uuid}`
    this.lockOwner = `${o.groupId}:${uuid}`
    this.now = o.now ?? (() => performance.now())
    this.lastHeartbeat = this.now()
  }

  get groupId(): string {
    return this.o.groupId
  }

  holds(topicId: string, partition: number): boolean {
    return this.held(topicId, partition) !== undefined
  }

  handledPositions(topicId: string, partition: number, offset: bigint): bigint[] | undefined {
    return this.held(topicId, partition)?.handledPositions(offset)
  }

  committedInTransaction(topicId: string, partition: number, positions: readonly bigint[]): void {
    this.held(topicId, partition)?.committedThrough(positions)
  }

  private held(topicId: string, partition: number): PartitionState | undefined {
    for (const s of this.partitions.values()) if (s.topicId === topicId && s.partition === partition && !s.revoked) return s
    return undefined
  }

  get topicIds(): string[] {
    return [...this.topicRows.values()].map((r) => r.id)
  }

  /** Partition counts the assigner's cluster answers with. */
  get partitionCounts(): ReadonlyMap<string, number> {
    return this.groupCounts
  }

  topicName(topicId: string): string | undefined {
    for (const row of this.topicRows.values()) if (row.id === topicId) return row.name
    return undefined
  }

  /** The subscription's reset rule for a topic: true = earliest, false = latest. */
  fromBeginning(topic: string): boolean {
    return this.o.subscriptions.get(topic)?.fromBeginning ?? false
  }

  /** Someone joined or left, or a fetch was fenced: re-read the group at the next opportunity. */
  markChanged(): void {
    this.needsSync = true
  }

  /**
   * The group moved to a generation this member has not taken yet: its leases are no longer renewed and may go to
   * another member, so nothing more is handed to a handler until the next sync (KafkaJS's REBALANCE_IN_PROGRESS).
   */
  get rebalancing(): boolean {
    return this.generationMoved
  }

  /** Whether this member's lease of the partition is surely still live (by the monotonic clock). */
  leaseLive(state: PartitionState): boolean {
    return this.now() < state.leaseDeadline
  }

  /** The member holds everything it was assigned in the current generation (nothing to wait for or take). */
  get settled(): boolean {
    return !this.needsSync && !this.waitingForLeader && !this.generationMoved && this.pending.length === 0
  }

  /** Whether KafkaJS's heartbeat() would send a heartbeat now: heartbeatInterval has passed since the last one. */
  heartbeatDue(): boolean {
    return this.now() - this.lastHeartbeat >= this.o.heartbeatInterval
  }

  /**
   * ms until the group machinery needs a beat whether or not a heartbeat is due: a group change to take, the leader
   * or a previous owner to wait for again, or leases to renew before they could lapse (an idle member otherwise beats
   * once per empty poll, as KafkaJS heartbeats after each empty fetch, which maxWaitTimeInMs may make rare).
   */
  nextSyncIn(): number {
    if (this.needsSync) return 0
    const since = this.now() - this.lastBeat
    const renew = Math.max(0, this.o.sessionTimeout / 2 - since)
    return this.pending.length > 0 || this.waitingForLeader ? Math.min(renew, Math.max(0, RETRY_MS - since)) : renew
  }

  /**
   * Between fetch rounds (no batch in flight): beat when the group machinery needs it (nextSyncIn), or, with
   * `heartbeat`, also when a heartbeat is due (KafkaJS's heartbeat after an empty fetch); rebalance if the group
   * changed, take and renew leases.
   */
  sync({ force = false, heartbeat = false } = {}): Promise<void> {
    return this.serialized(async () => {
      const beatNow = heartbeat && this.heartbeatDue()
      if (!force && !beatNow && this.nextSyncIn() > 0) return
      await this.beat(true, beatNow)
    })
  }

  /** From inside a batch (payload.heartbeat, between messages): beat and renew leases, but never take a new generation. */
  heartbeatIfDue(): Promise<void> {
    // called after every message: when none is due (the usual case) answer at once, not behind the serial chain
    if (!this.sharedBeat && !this.heartbeatDue()) return Promise.resolve()
    // concurrent callers share the one in flight, as KafkaJS's heartbeat does
    this.sharedBeat ??= this.serialized(async () => {
      if (!this.heartbeatDue()) return
      await this.beat(false, true)
    }).finally(() => {
      this.sharedBeat = undefined
    })
    return this.sharedBeat
  }

  async leave(): Promise<void> {
    const { ctx, groupId } = this.o
    this.left = true
    await ctx.store.members.leaveGroup(groupId, this.memberId, this.lockOwner)
    for (const state of this.partitions.values()) state.revoked = true
    this.partitions.clear()
    this.reacquired.clear()
  }

  private serialized(fn: () => Promise<void>): Promise<void> {
    const next = this.serial.then(fn, fn)
    this.serial = next.catch(() => undefined)
    return next
  }

  private offers(): Array<{ name: string; metadata: Buffer }> {
    const topics = [...this.topicRows.keys()]
    return this.o.assigners.map((a) => {
      const p = a.protocol({ topics })
      return { name: p.name, metadata: Buffer.from(p.metadata ?? Buffer.alloc(0)) }
    })
  }

  /**
   * One beat. `asHeartbeat`: it stands for a KafkaJS heartbeat (HEARTBEAT is emitted when it finds the member in its
   * generation); otherwise it is the join and rebalance machinery, which on Kafka is JoinGroup/SyncGroup, no event.
   */
  private beat(mayRebalance: boolean, asHeartbeat: boolean): Promise<void> {
    return this.o.network.as(asHeartbeat ? 'Heartbeat' : 'JoinGroup', () => this.beatOnce(mayRebalance, asHeartbeat))
  }

  private async beatOnce(mayRebalance: boolean, asHeartbeat: boolean): Promise<void> {
    const { ctx, groupId, emitter } = this.o
    const started = this.now()
    const db = ctx.db
    this.needsSync = false
    const subscribed = [...this.o.subscriptions.keys()]
    this.topicRows = await ctx.topics.get(db, subscribed, undefined, this.o.metadataMaxAge)
    await refuseGroupSharedWithDataHub(ctx, groupId, this.topicIds, {
      logger: this.o.logger,
      joining: !this.announced,
      wanted: () => !this.left,
    })
    if (this.left) return
    // protocol() is asked again on every rebalance, as KafkaJS asks it on every join
    const offers = (this.offered ??= this.offers())
    const beat = () =>
      ctx.store.members.heartbeat({
        group: groupId,
        memberId: this.memberId,
        clientId: this.o.clientId,
        clientHost: this.clientHost,
        topics: [...this.topicRows.keys()],
        topicIds: this.topicIds,
        sessionTimeoutMs: this.o.sessionTimeout,
        protocols: offers.map((p) => ({ name: p.name, metadata: p.metadata.toString('base64') })),
      })
    let rows: MemberRow[]
    try {
      rows = await beat()
    } catch (e) {
      if (sqlState(e) !== FOREIGN_KEY_VIOLATION) throw e
      // a subscribed topic was deleted elsewhere since its row was cached: go on without it, as KafkaJS's metadata
      // drops it (nothing fatal); it is read again at every beat, so a re-created topic is picked up
      ctx.topics.forget(subscribed)
      this.topicRows = await ctx.topics.get(db, subscribed)
      rows = await beat()
    }
    this.lastBeat = this.now()
    const members = leaderFirst(rows).map(toOffer)
    await this.refuseInconsistentProtocol(members)
    if (!this.announced) {
      // wake the group so its leader rebalances now rather than at its next heartbeat
      this.announced = true
      await ctx.store.members.announceMembershipChange(groupId)
    }
    let generation = await ctx.store.groupGeneration.readGeneration(groupId)
    // the leader writes the next generation even from inside a batch (a member joined): its own round then stops
    // handing out and it takes the generation at the next sync, as a KafkaJS leader's heartbeat starts the rebalance
    if (members[0].memberId === this.memberId) generation = await this.lead(members, generation)
    const mine = generation?.assignment[this.memberId]
    // not in the current generation yet (the leader has not seen this member): nothing to take or renew
    this.waitingForLeader = mine === undefined
    const rebalance = mine !== undefined && generation!.generation !== this.generation
    if (rebalance && !mayRebalance) this.needsSync = true
    if (rebalance && mayRebalance) await this.adopt(generation!, mine)
    this.generationMoved = generation !== null && generation.generation !== this.generation
    // leases of an older generation are not renewed: they lapse, and the fetch fence already refuses them
    if (mine !== undefined && generation!.generation === this.generation) await this.renewLeases()
    // a beat that finds the group rebalancing is, on Kafka, a heartbeat answered REBALANCE_IN_PROGRESS: no event
    if (asHeartbeat && !rebalance && !this.generationMoved && !this.waitingForLeader) {
      emitter.emit(consumerEvents.HEARTBEAT, { groupId, memberId: this.memberId, groupGenerationId: this.generation })
      this.lastHeartbeat = this.now()
    }
    if (rebalance && mayRebalance) {
      emitter.emit(consumerEvents.GROUP_JOIN, {
        groupId,
        memberId: this.memberId,
        leaderId: this.leaderId,
        isLeader: this.leaderId === this.memberId,
        memberAssignment: this.assignment,
        groupProtocol: this.protocol,
        duration: Math.round(this.now() - started),
      })
    }
  }

  /** As Kafka's coordinator: a member offering no assigner the others all offer cannot join. */
  private async refuseInconsistentProtocol(members: GroupMemberOffer[]): Promise<void> {
    const others = members.filter((m) => m.memberId !== this.memberId)
    if (others.length === 0) return
    const mine = this.o.assigners.map((a) => a.name)
    if (chooseProtocol(mine, others) !== null) return
    const { ctx, groupId } = this.o
    await ctx.store.members.leaveGroup(groupId, this.memberId, this.lockOwner)
    this.o.logger.error('No partition assigner in common with the group', { groupId, assigners: mine })
    throw protocolError('INCONSISTENT_GROUP_PROTOCOL')
  }

  /**
   * The leader's turn: if the group changed since the current generation was computed, run the assigner and write
   * the next generation (only if nobody wrote one meanwhile). Returns the generation now current.
   */
  private async lead(members: GroupMemberOffer[], current: GenerationRow | null): Promise<GenerationRow | null> {
    const { ctx, groupId, logger } = this.o
    const wanted = [...new Set(members.flatMap((m) => m.topics))]
    const rows = await ctx.topics.get(ctx.db, wanted, undefined, this.o.metadataMaxAge)
    this.groupCounts = new Map([...rows.values()].map((r) => [r.name, r.partitionCount]))
    const memberKey = JSON.stringify([
      members.map((m) => [m.memberId, [...m.topics].sort(), m.protocols.map((p) => [p.name, p.metadata.toString('base64')])]).sort(),
      [...this.groupCounts].sort(),
    ])
    if (current && current.memberKey === memberKey) return current
    const protocol = chooseProtocol(
      this.o.assigners.map((a) => a.name),
      members,
    )
    if (protocol === null) return current // a member without a common assigner is about to be refused
    const assigner = this.o.assigners.find((a) => a.name === protocol)!
    const assigned = await runAssigner(assigner, members)
    const assignment = Object.fromEntries([...assigned].map(([id, bytes]) => [id, bytes.toString('base64')]))
    const seen = current?.generation ?? 0
    const generation = await ctx.store.groupGeneration.writeGeneration({
      group: groupId,
      seen,
      leaderId: this.memberId,
      protocol,
      memberKey,
      assignment,
    })
    if (generation === null) return ctx.store.groupGeneration.readGeneration(groupId)
    logger.debug('Wrote group generation', { groupId, generation, protocol, members: members.length })
    return { generation, leaderId: this.memberId, protocol, memberKey, assignment }
  }

  /** Takes the leader's assignment for a new generation: partitions no longer ours are committed and released. */
  private async adopt(generation: GenerationRow, encoded: string): Promise<void> {
    const { groupId, emitter, logger } = this.o
    if (this.generation !== 0) emitter.emit(consumerEvents.REBALANCING, { groupId, memberId: this.memberId })
    const { assignment, assignedTopics, unsubscribed } = decodeAssignment(Buffer.from(encoded, 'base64'), new Set(this.o.subscriptions.keys()))
    if (unsubscribed.length > 0) {
      emitter.emit(consumerEvents.RECEIVED_UNSUBSCRIBED_TOPICS, {
        groupId,
        generationId: generation.generation,
        memberId: this.memberId,
        assignedTopics,
        topicsSubscribed: [...this.o.subscriptions.keys()],
        topicsNotSubscribed: unsubscribed,
      })
      logger.warn('Consumer group received unsubscribed topics', { groupId, topicsNotSubscribed: unsubscribed })
    }
    this.assignment = assignment
    // committed under the generation the leases were taken in, before they carry the new one
    await this.revokeUnassigned()
    this.generation = generation.generation
    this.offered = undefined
    this.leaderId = generation.leaderId ?? ''
    this.protocol = generation.protocol ?? ''
  }

  private async revokeUnassigned(): Promise<void> {
    const lost = [...this.partitions.values()].filter((s) => !this.assignment[s.topic]?.includes(s.partition))
    if (lost.length === 0) return
    const { ctx, groupId } = this.o
    await this.o.beforeRevoke(lost)
    await ctx.store.leases.releaseLeases(groupId, this.lockOwner, lost)
    for (const s of lost) this.drop(s)
    // the new owners are waiting for these leases: wake them
    await ctx.store.members.announceMembershipChange(groupId)
  }

  /** `reacquired`: this member holds the lease again and starts the partition afresh (PartitionState.succeed). */
  private drop(state: PartitionState, reacquired = false): void {
    state.revoked = true
    this.partitions.delete(state.key)
    if (reacquired) this.reacquired.set(state.key, state)
    else this.reacquired.delete(state.key)
  }

  private async renewLeases(): Promise<void> {
    const { ctx, groupId, logger } = this.o
    const wanted: Array<PartitionRef & { topic: string }> = []
    for (const [topic, partitions] of Object.entries(this.assignment)) {
      const row = this.topicRows.get(topic)
      if (row) for (const partition of partitions) wanted.push({ topic, topicId: row.id, partition })
    }
    const lifetime = this.o.sessionTimeout
    const sentAt = this.now()
    const held = await ctx.store.leases.acquireLeases({ group: groupId, lockOwner: this.lockOwner, generation: this.generation }, lifetime, wanted)
    // the database sets locked_until = its now() + lifetime, and its now() is after sentAt: until sentAt + lifetime
    // (less a margin for clock rates) nobody can take these over
    const deadline = sentAt + lifetime * 0.9
    const byKey = new Map(held.map((h) => [`${h.topicId}:${h.partition}`, h]))
    for (const state of [...this.partitions.values()]) {
      const lease = byKey.get(`${state.topicId}:${state.partition}`)
      if (!lease) {
        logger.warn('Lost the lease of a partition to another member', { groupId, topic: state.topic, partition: state.partition })
        this.drop(state)
      } else if (lease.fresh || state.revoked) {
        // held again after a break (lapsed, or refused and given back): someone else may have moved it meanwhile,
        // so it starts afresh from the committed offset
        logger.info('Re-acquired a partition; starting it from the committed offset', { groupId, topic: state.topic, partition: state.partition })
        this.drop(state, true)
      } else state.leaseDeadline = deadline
    }
    const fresh = wanted.filter((w) => byKey.has(`${w.topicId}:${w.partition}`) && !this.partitions.has(keyOf(w.topic, w.partition)))
    this.pending = wanted.filter((w) => !byKey.has(`${w.topicId}:${w.partition}`))
    if (fresh.length > 0) await this.start(fresh, deadline)
  }

  /** Where to start on partitions just taken: the committed offset, reset when it is past the end of the log. */
  private async start(fresh: Array<PartitionRef & { topic: string }>, deadline: number): Promise<void> {
    const { ctx, groupId, logger } = this.o
    const claims = fresh.map((f) => ({ ...f, fromBeginning: this.fromBeginning(f.topic) }))
    const { positions, busy } = await againIfTopicDeleted(() => claimStartPositions(ctx.db, groupId, claims, RETRY_MS))
    if (busy.length > 0) {
      // leased, but its offsets are held by the previous owner's open transaction: taken at a later beat
      logger.debug('Partition offsets held by an open transaction; starting it later', {
        groupId,
        partitions: busy.map((b) => `${b.topicId}:${b.partition}`),
      })
      this.pending.push(...fresh.filter((f) => busy.some((b) => b.topicId === f.topicId && b.partition === f.partition)))
    }
    for (const pos of positions) {
      const claim = claims.find((c) => c.topicId === pos.topicId && c.partition === pos.partition)!
      const committed = await this.checkedStart(pos, claim)
      const state = new PartitionState(claim.topic, pos.topicId, pos.partition, committed, pos.priorityPositions)
      state.highWatermark = pos.high
      state.leaseDeadline = deadline
      const earlier = this.reacquired.get(state.key)
      this.reacquired.delete(state.key)
      if (earlier) state.succeed(earlier)
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

/** The oldest live member first (it leads), then by join time; ties by member id. */
function leaderFirst(rows: MemberRow[]): MemberRow[] {
  return [...rows].sort((a, b) => {
    const d = BigInt(a.joinedAtMs) - BigInt(b.joinedAtMs)
    return d !== 0n ? (d < 0n ? -1 : 1) : a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0
  })
}

function toOffer(row: MemberRow): GroupMemberOffer {
  return {
    memberId: row.memberId,
    topics: row.topics,
    protocols: (row.protocols ?? []).map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata, 'base64') })),
  }
}

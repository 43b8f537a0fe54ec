import type { Logger, Offsets, ProducerBatch, RecordMetadata, Transaction } from 'kafkajs'
import type pg from 'pg'
import type { PgQueueContext } from '../client/context.js'
import type { Queryable } from '../db/database.js'
import { sqlState, toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { validateGroupId } from '../kafkajs/messageValidation.js'
import type { NetworkInstrumentation } from '../kafkajs/networkEvents.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { hasLocalMember, localMemberHolding } from '../client/groupMembers.js'
import { storeFor, type Store } from '../store/handle.js'
import type { PartitionRef } from '../store/leases.js'
import { begin, endTransaction, rollback } from '../store/transactions.js'

interface TransactionState {
  client: pg.PoolClient
  /** the store bound to `client` */
  store: Store
  ended: boolean
  /** sendOffsets was refused: the transaction can only abort */
  fenced: boolean
  /** the consumer leases the offsets were written under, checked again at COMMIT */
  leases: Array<{ owner: { group: string; lockOwner: string; generation: number }; partitions: PartitionRef[] }>
}

type SendWithin = (client: pg.PoolClient, batch: ProducerBatch) => Promise<RecordMetadata[]>

/** KafkaJS's Transaction, plus the caller's own writes in it (the outbox's sendWith the other way round). */
export interface PgQueueTransaction extends Transaction {
  /** Runs `work` on the transaction's connection: what it writes commits or rolls back with the transaction. */
  within<T>(work: (client: Queryable) => Promise<T>): Promise<T>
}

/**
 * KafkaJS transactions as PostgreSQL transactions on one held connection: sends insert, sendOffsets writes the
 * group's offsets, commit/abort are COMMIT/ROLLBACK. Consumers see nothing before COMMIT, and a rollback also
 * undoes the sequence allocation, so it leaves no gap. A producer's first transaction takes the next epoch of its
 * transactional id, as Kafka's initTransactions does; a transaction of an older epoch (a zombie) is refused.
 */
export class TransactionManager {
  private epoch?: string
  private active?: TransactionState

  constructor(
    private readonly ctx: PgQueueContext,
    private readonly transactionalId: string | undefined,
    /** KafkaJS's transactionTimeout (ms) */
    private readonly transactionTimeout: number,
    private readonly logger: Logger,
    private readonly network: NetworkInstrumentation,
    private readonly sendWithin: SendWithin,
  ) {}

  async begin(): Promise<PgQueueTransaction> {
    const id = this.transactionalId
    if (!id) throw new KafkaJSNonRetriableError('Must provide transactional id for transactional producer')
    if (this.active && !this.active.ended) {
      throw new KafkaJSNonRetriableError(
        'There is already an ongoing transaction for this producer. Please end the transaction before beginning another.',
      )
    }
    const { db } = this.ctx
    // the pool's store, bound now: a disconnect during the transaction leaves ctx without a database
    const pooled = storeFor(db)
    let client: pg.PoolClient
    let store: Store
    try {
      if (this.epoch === undefined) {
        const taken = await this.network.as('InitProducerId', () => pooled.producers.bumpProducerEpoch(id))
        if (taken.aborted) this.logger.warn('Aborted the open transaction of an older producer with this transactional id', { transactionalId: id })
        this.epoch = taken.epoch
      }
      client = await db.checkout()
      store = storeFor(db, client)
      try {
        await store.producers.registerTransaction(id, this.epoch)
        // READ COMMITTED: offsets are assigned at COMMIT, which a REPEATABLE READ or SERIALIZABLE snapshot (a server
        // default_transaction_isolation) cannot do
        await begin(client)
        await store.producers.limitTransactionIdle(this.transactionTimeout)
      } catch (e) {
        client.release(true)
        throw e
      }
    } catch (e) {
      throw toKafkaJSError(e, 'transaction')
    }
    const state: TransactionState = { client, store, ended: false, fenced: false, leases: [] }
    this.active = state
    const epoch = this.epoch

    const assertActive = () => {
      if (state.ended) throw new KafkaJSNonRetriableError('Cannot continue to use transaction once ended')
    }
    const end = async (commit: boolean) => {
      assertActive()
      state.ended = true
      let broken = false
      let committing = false
      try {
        if (commit && !(await store.producers.holdsEpoch(id, epoch))) {
          await rollback(client)
          this.logger.error('Transaction refused: a newer producer took this transactional id', { transactionalId: id })
          throw protocolError('INVALID_PRODUCER_EPOCH')
        }
        if (commit && !(await this.stillHeld(state))) {
          await rollback(client)
          this.logger.error('Transaction refused: its consumer no longer holds the partitions of its offsets', { transactionalId: id })
          throw protocolError('ILLEGAL_GENERATION')
        }
        committing = commit
        await this.network.as('EndTxn', () => endTransaction(client, commit ? 'commit' : 'rollback'))
      } catch (e) {
        broken = !(e as { type?: string }).type
        if (!commit) return
        // the connection broke at COMMIT (no SQLSTATE: the answer was lost, not refused): find out what the server
        // did, as KafkaJS retries EndTxn until the coordinator answers, so a retry of the batch copies nothing twice
        if (broken && committing && sqlState(e) === undefined) {
          const outcome = await pooled.producers.settleLostCommit(id, epoch).catch(() => 'unknown' as const)
          if (outcome === 'committed') {
            this.logger.warn('The answer to COMMIT was lost; the transaction had committed', { transactionalId: id })
            return
          }
          if (outcome === 'rolled back') {
            throw new KafkaJSError(`commit: the connection broke at COMMIT and the transaction was rolled back: ${(e as Error).message}`, {
              retriable: true,
            })
          }
        }
        // our connection may have been terminated by a successor taking the id: report that as fencing
        if (broken && (await pooled.producers.currentEpoch(id).catch(() => epoch)) !== epoch) {
          throw protocolError('INVALID_PRODUCER_EPOCH')
        }
        throw toKafkaJSError(e, 'commit')
      } finally {
        client.release(broken || undefined)
      }
    }

    return {
      send: async (record) => {
        assertActive()
        return this.sendWithin(client, { acks: record.acks, timeout: record.timeout, compression: record.compression, topicMessages: [record] })
      },
      sendBatch: async (batch) => {
        assertActive()
        return this.sendWithin(client, batch)
      },
      sendOffsets: async ({ consumerGroupId, topics }: Offsets & { consumerGroupId: string }) => {
        assertActive()
        validateGroupId(consumerGroupId)
        const rows = await this.ctx.topics.get(
          db,
          topics.map((t) => t.topic),
        )
        const commits = topics.flatMap(({ topic, partitions }) => {
          const row = rows.get(topic)
          if (!row) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
          // uncommittedOffsets() hands partitions out as strings, as KafkaJS's does, and apps pass that on here
          return partitions.map((p) => ({ topicId: row.id, partition: Number(p.partition), offset: String(p.offset) }))
        })
        // the consumer of this group on this client whose partitions these are: the offsets are written only while
        // it holds them in its generation, and the check is repeated, with the leases locked, right before COMMIT
        const member = localMemberHolding(this.ctx, consumerGroupId, commits)
        if (!member && hasLocalMember(this.ctx, consumerGroupId)) {
          state.fenced = true
          throw protocolError('ILLEGAL_GENERATION')
        }
        const owner = member ? { group: consumerGroupId, lockOwner: member.lockOwner, generation: member.generation } : null
        // with priorities, an offset past a lower-priority message the member was not given yet is stored as
        // per-priority positions, as an explicit commit is: the next owner still gets that message. A member whose
        // state of the partition never handed out the committed message (it restarted the partition from the
        // committed offset meanwhile) cannot translate it: fenced, as Kafka fences a member that lost its partition
        const positioned = commits.map((c) => {
          if (!member) return c
          const priorityPositions = member.handledPositions(c.topicId, c.partition, BigInt(c.offset))
          if (!priorityPositions) {
            state.fenced = true
            throw protocolError('ILLEGAL_GENERATION')
          }
          return { ...c, offset: undefined, priorityPositions }
        })
        const done = await this.network.as('TxnOffsetCommit', () =>
          store.offsets.commitOffsets(consumerGroupId, positioned, {
            lockOwner: owner?.lockOwner ?? null,
            generation: owner?.generation,
            exact: true,
          }),
        )
        if (done.length < commits.length) {
          state.fenced = true
          throw protocolError('ILLEGAL_GENERATION')
        }
        if (owner) state.leases.push({ owner, partitions: commits })
        // as KafkaJS's sendOffsets marks the offsets committed in the client's cluster right away (commit or abort
        // later): the consumer of this client no longer lists them in uncommittedOffsets()
        if (member)
          for (const c of positioned) member.committedInTransaction(c.topicId, c.partition, 'priorityPositions' in c ? c.priorityPositions : [])
      },
      within: async (work) => {
        assertActive()
        return work(client)
      },
      commit: () => end(true),
      abort: () => end(false),
      isActive: () => !state.ended,
    }
  }

  /** Locks the leases the offsets were fenced by until COMMIT: a takeover waits for it, or has already happened. */
  private async stillHeld(state: TransactionState): Promise<boolean> {
    if (state.fenced) return false
    for (const { owner, partitions } of state.leases) {
      const held = await state.store.leases.lockHeldLeases(owner, partitions)
      if (held.length < new Set(partitions.map((p) => `${p.topicId}:${p.partition}`)).size) return false
    }
    return true
  }

  /** On disconnect: an unfinished transaction is rolled back, as Kafka aborts it when the producer goes away. */
  async close(): Promise<void> {
    const active = this.active
    if (!active || active.ended) return
    active.ended = true
    await rollback(active.client).catch(() => undefined)
    active.client.release()
  }
}

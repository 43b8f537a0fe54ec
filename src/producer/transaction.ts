import type { Logger, Offsets, ProducerBatch, RecordMetadata, Transaction } from 'kafkajs'
import type pg from 'pg'
import type { PgQueueContext } from '../client/context.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { commitOffsets } from '../store/offsets.js'

export interface TransactionDeps {
  transactionalId?: string
  logger: Logger
  sendBatch: (batch: ProducerBatch, client: pg.PoolClient) => Promise<RecordMetadata[]>
}

const active = new WeakMap<TransactionDeps['sendBatch'], boolean>()

/**
 * A KafkaJS transaction as one PostgreSQL transaction on one held connection: sends insert, sendOffsets writes
 * the group's offsets, commit/abort are COMMIT/ROLLBACK. Consumers see nothing until COMMIT, and a rollback
 * also rolls back the sequence allocation, so it leaves no gap.
 */
export async function beginTransaction(ctx: PgQueueContext, deps: TransactionDeps): Promise<Transaction> {
  if (!deps.transactionalId) {
    throw new KafkaJSNonRetriableError('Must provide transactional id for transactional producer')
  }
  if (active.get(deps.sendBatch)) {
    throw new KafkaJSNonRetriableError(
      'There is already an ongoing transaction for this producer. Please end the transaction before beginning another.',
    )
  }
  active.set(deps.sendBatch, true)
  let client: pg.PoolClient
  try {
    client = await ctx.db.pool.connect()
    await client.query('BEGIN')
  } catch (e) {
    active.delete(deps.sendBatch)
    throw toKafkaJSError(e, 'transaction')
  }
  let ended = false

  const assertActive = () => {
    if (ended) throw new KafkaJSNonRetriableError('Cannot continue to use transaction once ended')
  }
  const end = async (sql: 'COMMIT' | 'ROLLBACK') => {
    assertActive()
    ended = true
    active.delete(deps.sendBatch)
    let broken = false
    try {
      await client.query(sql)
    } catch (e) {
      broken = true
      if (sql === 'COMMIT') throw toKafkaJSError(e, 'commit')
    } finally {
      client.release(broken || undefined)
    }
  }

  return {
    send: async (record) => {
      assertActive()
      return deps.sendBatch(
        { acks: record.acks, timeout: record.timeout, compression: record.compression, topicMessages: [record] },
        client,
      )
    },
    sendBatch: async (batch) => {
      assertActive()
      return deps.sendBatch(batch, client)
    },
    sendOffsets: async ({ consumerGroupId, topics }: Offsets & { consumerGroupId: string }) => {
      assertActive()
      const rows = await ctx.topics.get(ctx.db, topics.map((t) => t.topic))
      const commits = topics.flatMap(({ topic, partitions }) => {
        const row = rows.get(topic)
        if (!row) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
        return partitions.map((p) => ({ topicId: row.id, partition: p.partition, offset: String(p.offset) }))
      })
      await commitOffsets(client, ctx.db.tables, consumerGroupId, commits, { lockOwner: null, exact: true })
    },
    commit: () => end('COMMIT'),
    abort: () => end('ROLLBACK'),
    isActive: () => !ended,
  }
}

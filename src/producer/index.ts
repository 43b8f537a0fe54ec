import { randomUUID } from 'node:crypto'
import kafkajs from '../kafkajs/upstream.js'
import type { Logger, Message, Producer, ProducerBatch, ProducerConfig, ProducerRecord, RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { PayloadCompression } from '../config/types.js'
import type { Queryable } from '../db/database.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { createInstrumentationEmitter, producerEvents } from '../kafkajs/instrumentation.js'
import { normalizeProducerBatch, validateTopicName, validateTransactionalId } from '../kafkajs/messageValidation.js'
import { defaultPartitioner } from '../kafkajs/partitioners.js'
import { createRetrier } from '../kafkajs/retry.js'
import type { NewTopic } from '../store/topics.js'
import { writeDeferred } from './deferredWrite.js'
import { planSend, writePlan, type PartitionBatch, type Partitioner, type TopicBatch } from './sendMessages.js'
import { TransactionManager } from './transaction.js'

type Status = 'disconnected' | 'connecting' | 'connected' | 'disconnecting'

/** KafkaJS's Producer plus the transactional outbox: send through the caller's own connection and transaction. */
export interface PgQueueProducer extends Producer {
  /** Writes inside `client`'s open transaction: the messages commit or roll back with the caller's own rows. */
  sendWith(client: Queryable, record: ProducerRecord): Promise<RecordMetadata[]>
  sendBatchWith(client: Queryable, batch: ProducerBatch): Promise<RecordMetadata[]>
}

/** KafkaJS's `compression` argument: None keeps the configured codec; any codec asks for Snappy. */
export function payloadCompressionFor(compression: number | undefined, configured: PayloadCompression): PayloadCompression {
  return compression === undefined || compression === kafkajs.CompressionTypes.None ? configured : 'SNAPPY'
}

export function newTopicFromDefaults(ctx: PgQueueContext, name: string, numPartitions?: number): NewTopic {
  validateTopicName(name)
  const d = ctx.config.topicDefaults
  return {
    name,
    partitionCount: numPartitions && numPartitions > 0 ? numPartitions : d.partitionCount,
    retentionMaxAgeSeconds: d.retentionMaxAgeSeconds,
    maxRowsPerTopic: d.maxRowsPerTopic,
    maxTotalPayloadBytes: d.maxTotalPayloadBytes,
    aggressiveRetention: d.aggressiveRetention,
    config: {},
  }
}

const recordAsBatch = (r: ProducerRecord): ProducerBatch => ({ acks: r.acks, timeout: r.timeout, compression: r.compression, topicMessages: [r] })

export function createProducer(ctx: PgQueueContext, rootLogger: Logger, config: ProducerConfig = {}): PgQueueProducer {
  validateTransactionalId(config.transactionalId)
  const logger = rootLogger.namespace('Producer')
  const emitter = createInstrumentationEmitter(producerEvents, { logger, clientName: 'producer' })
  const idempotent = config.idempotent ?? false
  const retrier = createRetrier({ ...config.retry, retries: config.retry?.retries ?? (idempotent ? Number.MAX_SAFE_INTEGER : 5) })
  const partitioner: Partitioner = (config.createPartitioner ?? defaultPartitioner)()
  const allowAutoTopicCreation = config.allowAutoTopicCreation ?? true
  // idempotence: a producer id per producer instance and a sequence per partition, as Kafka's producer id / sequence
  const producerId = randomUUID()
  const sequences = new Map<string, number>()
  let sendChain: Promise<unknown> = Promise.resolve()
  let status: Status = 'disconnected'
  let inFlight = 0
  let idle: (() => void) | undefined

  const assertConnected = () => {
    if (status === 'disconnecting') {
      throw new KafkaJSNonRetriableError(`The producer is disconnecting; therefore, it can't safely accept messages anymore`)
    }
    if (status !== 'connected') throw new KafkaJSError('The producer is disconnected')
  }

  /** Validation first: nothing is written for a batch with one bad message. */
  const plan = async (batch: ProducerBatch): Promise<PartitionBatch[]> => {
    const { acks = -1, compression, topicMessages = [] } = batch
    if (idempotent && acks !== -1) {
      throw new KafkaJSNonRetriableError(`Not requiring ack for all messages invalidates the idempotent producer's EoS guarantees`)
    }
    const normalized = normalizeProducerBatch(topicMessages, { maxMessageBytes: ctx.config.maxMessageBytes })
    const batches: TopicBatch[] = normalized.map((b, i) => ({
      topic: b.topic,
      messages: b.messages,
      originals: topicMessages[i].messages as Message[],
    }))
    const planned = await planSend(ctx, batches, {
      partitioner,
      compression: payloadCompressionFor(compression, ctx.config.payloadCompression),
      autoCreate: allowAutoTopicCreation ? (name: string) => newTopicFromDefaults(ctx, name) : undefined,
    })
    if (idempotent) {
      for (const p of planned) {
        const key = `${p.topic.id}:${p.partition}`
        const last = (sequences.get(key) ?? -1) + p.rows.length
        sequences.set(key, last)
        p.sequence = { producerId, lastSequence: last }
      }
    }
    return planned
  }

  /** Writes with KafkaJS's retry policy; an idempotent producer's retry after an ambiguous failure is deduplicated. */
  const send = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    // the plan (topic lookup, partitions, sequences) is made once and kept across retries of the write
    const write = () => {
      let planned: PartitionBatch[] | undefined
      return retrier(async (bail) => {
        try {
          planned ??= await plan(batch)
          return await writePlan(ctx, planned)
        } catch (e) {
          const err = toKafkaJSError(e, 'send')
          if (!err.retriable) bail(err)
          throw err
        }
      })
    }
    if (!idempotent) return write()
    // one batch at a time, so a partition's producer sequences are written in order
    const result = sendChain.then(write, write)
    sendChain = result.catch(() => undefined)
    return result
  }

  /**
   * Inside someone else's transaction (outbox, producer transactions): no retry, the caller owns the outcome, and
   * offsets are assigned at commit so the open transaction does not stall other producers.
   */
  const sendWithin = async (client: Queryable, batch: ProducerBatch): Promise<RecordMetadata[]> => {
    try {
      return await writeDeferred(ctx, await plan(batch), client)
    } catch (e) {
      throw toKafkaJSError(e, 'send')
    }
  }

  const tracked = async <T>(fn: () => Promise<T>): Promise<T> => {
    assertConnected()
    inFlight++
    try {
      return await fn()
    } finally {
      if (--inFlight === 0) idle?.()
    }
  }

  const transactions = new TransactionManager(ctx, config.transactionalId, logger, (client, batch) => tracked(() => sendWithin(client, batch)))

  const producer: PgQueueProducer = {
    connect: async () => {
      if (status === 'connected') return
      status = 'connecting'
      try {
        await ctx.acquire()
      } catch (e) {
        status = 'disconnected'
        throw toKafkaJSError(e, 'connect')
      }
      status = 'connected'
      emitter.emit(producerEvents.CONNECT)
    },
    disconnect: async () => {
      if (status === 'disconnected') return
      status = 'disconnecting'
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve))
      await transactions.close()
      await ctx.release()
      status = 'disconnected'
      emitter.emit(producerEvents.DISCONNECT)
    },
    isIdempotent: () => idempotent,
    events: producerEvents,
    on: (eventName, listener) => emitter.on(eventName, listener as never),
    send: (record) => tracked(() => send(recordAsBatch(record))),
    sendBatch: (batch) => tracked(() => send(batch)),
    sendWith: (client, record) => tracked(() => sendWithin(client, recordAsBatch(record))),
    sendBatchWith: (client, batch) => tracked(() => sendWithin(client, batch)),
    transaction: () => {
      assertConnected()
      return transactions.begin()
    },
    logger: () => logger,
  }
  return producer
}

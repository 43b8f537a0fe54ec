import kafkajs from 'kafkajs'
import type { Logger, Message, Producer, ProducerBatch, ProducerConfig, ProducerRecord, RecordMetadata, Transaction } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { PayloadCompression } from '../config/types.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { createInstrumentationEmitter, producerEvents } from '../kafkajs/instrumentation.js'
import { normalizeProducerBatch } from '../kafkajs/messageValidation.js'
import { defaultPartitioner } from '../kafkajs/partitioners.js'
import { createRetrier } from '../kafkajs/retry.js'
import type { NewTopic } from '../store/topics.js'
import { sendMessages, type Partitioner, type TopicBatch } from './sendMessages.js'
import { beginTransaction } from './transaction.js'

type Status = 'disconnected' | 'connecting' | 'connected' | 'disconnecting'

/** KafkaJS's `compression` argument: None keeps the configured codec; any codec asks for Snappy. */
export function payloadCompressionFor(compression: number | undefined, configured: PayloadCompression): PayloadCompression {
  return compression === undefined || compression === kafkajs.CompressionTypes.None ? configured : 'SNAPPY'
}

export function newTopicFromDefaults(ctx: PgQueueContext, name: string, numPartitions?: number): NewTopic {
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

export function createProducer(ctx: PgQueueContext, rootLogger: Logger, config: ProducerConfig = {}): Producer {
  const logger = rootLogger.namespace('Producer')
  const emitter = createInstrumentationEmitter(producerEvents, { logger, clientName: 'producer' })
  const idempotent = config.idempotent ?? false
  const retrier = createRetrier({ ...config.retry, retries: config.retry?.retries ?? (idempotent ? Number.MAX_SAFE_INTEGER : 5) })
  const partitioner: Partitioner = (config.createPartitioner ?? defaultPartitioner)()
  const allowAutoTopicCreation = config.allowAutoTopicCreation ?? true
  let status: Status = 'disconnected'
  let inFlight = 0
  let idle: (() => void) | undefined

  const assertConnected = () => {
    if (status === 'disconnecting') {
      throw new KafkaJSNonRetriableError(`The producer is disconnecting; therefore, it can't safely accept messages anymore`)
    }
    if (status !== 'connected') throw new KafkaJSError('The producer is disconnected')
  }

  /** Validation first (nothing is written for a bad batch), then the write with KafkaJS's retry policy. */
  const sendBatch = async (batch: ProducerBatch, client?: Parameters<typeof sendMessages>[3]): Promise<RecordMetadata[]> => {
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
    const opts = {
      partitioner,
      compression: payloadCompressionFor(compression, ctx.config.payloadCompression),
      autoCreate: allowAutoTopicCreation ? (name: string) => newTopicFromDefaults(ctx, name) : undefined,
    }
    // inside a transaction a failed statement aborts it: the caller decides, no retry here
    if (client) return sendMessages(ctx, batches, opts, client).catch((e) => Promise.reject(toKafkaJSError(e, 'send')))
    return retrier(async (bail) => {
      try {
        return await sendMessages(ctx, batches, opts)
      } catch (e) {
        const err = toKafkaJSError(e, 'send')
        if (!err.retriable) bail(err)
        throw err
      }
    })
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

  const producer: Producer = {
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
      await ctx.release()
      status = 'disconnected'
      emitter.emit(producerEvents.DISCONNECT)
    },
    isIdempotent: () => idempotent,
    events: producerEvents,
    on: (eventName, listener) => emitter.on(eventName, listener as never),
    send: (record: ProducerRecord) =>
      tracked(() =>
        sendBatch({ acks: record.acks, timeout: record.timeout, compression: record.compression, topicMessages: [record] }),
      ),
    sendBatch: (batch: ProducerBatch) => tracked(() => sendBatch(batch)),
    transaction: (): Promise<Transaction> => {
      assertConnected()
      return beginTransaction(ctx, { transactionalId: config.transactionalId, logger, sendBatch })
    },
    logger: () => logger,
  }
  return producer
}

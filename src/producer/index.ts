import { randomUUID } from 'node:crypto'
import kafkajs from '../kafkajs/upstream.js'
import type { Logger, Message, Producer, ProducerBatch, ProducerConfig, ProducerRecord, RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { newTopicFromDefaults } from '../client/topicDefaults.js'
import type { PayloadCompression } from '../config/types.js'
import type { Queryable } from '../db/database.js'
import { isDeletedTopic, toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSError, KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { createInstrumentationEmitter, producerEvents } from '../kafkajs/instrumentation.js'
import { kafkajsSendChecks, normalizeProducerBatch, topicNameProblem, validateTransactionalId } from '../kafkajs/messageValidation.js'
import { createNetworkInstrumentation } from '../kafkajs/networkEvents.js'
import { defaultPartitioner } from '../kafkajs/partitioners.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { createRetrier } from '../kafkajs/retry.js'
import { writeDeferred } from './deferredWrite.js'
import { planSend, writePlan, type PartitionBatch, type Partitioner, type TopicBatch } from './sendMessages.js'
import { traceSend } from '../tracing/messaging.js'
import { TransactionManager, type PgQueueTransaction } from './transaction.js'

export type { PgQueueTransaction }

type Status = 'disconnected' | 'connecting' | 'connected' | 'disconnecting'

/**
 * KafkaJS's Producer plus the transactional outbox: send through the caller's own connection and transaction; and a
 * transaction that can carry the caller's own writes (within).
 */
export interface PgQueueProducer extends Producer {
  /** Writes inside `client`'s open transaction: the messages commit or roll back with the caller's own rows. */
  sendWith(client: Queryable, record: ProducerRecord): Promise<RecordMetadata[]>
  sendBatchWith(client: Queryable, batch: ProducerBatch): Promise<RecordMetadata[]>
  transaction(): Promise<PgQueueTransaction>
}

/**
 * KafkaJS's `compression` argument: None keeps the configured codec; any codec asks for Snappy. Snappy is this
 * transport's own codec; any other is looked up in CompressionCodecs first, as KafkaJS does, so LZ4 and ZSTD throw
 * KafkaJSNotImplemented until the application registers them.
 */
export function payloadCompressionFor(compression: number | undefined, configured: PayloadCompression): PayloadCompression {
  if (compression === undefined || compression === kafkajs.CompressionTypes.None) return configured
  if (compression !== kafkajs.CompressionTypes.Snappy) (kafkajs.CompressionCodecs as Record<number, (() => unknown) | undefined>)[compression]?.()
  return 'SNAPPY'
}

/** KafkaJS's producer default */
const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000

const recordAsBatch = (r: ProducerRecord): ProducerBatch => ({ acks: r.acks, timeout: r.timeout, compression: r.compression, topicMessages: [r] })

export function createProducer(ctx: PgQueueContext, rootLogger: Logger, config: ProducerConfig = {}, clientId = 'kafkajs'): PgQueueProducer {
  validateTransactionalId(config.transactionalId)
  const logger = rootLogger.namespace('Producer')
  const emitter = createInstrumentationEmitter(producerEvents, { logger, clientName: 'producer' })
  const network = createNetworkInstrumentation(emitter, clientId, () => ctx.endpoint, config.maxInFlightRequests)
  const idempotent = config.idempotent ?? false
  const retry = config.retry ?? { retries: idempotent ? Number.MAX_SAFE_INTEGER : 5 }
  // KafkaJS's check, at kafka.producer() (an unset `retries` passes, as there)
  if (idempotent && (retry.retries as number) < 1) {
    throw new KafkaJSNonRetriableError('Idempotent producer must allow retries to protect against transient errors')
  }
  const retrier = createRetrier({ ...retry, retries: retry.retries ?? (idempotent ? Number.MAX_SAFE_INTEGER : 5) })
  const metadataMaxAge = config.metadataMaxAge ?? 300_000
  const partitioner: Partitioner = (config.createPartitioner ?? defaultPartitioner)()
  const allowAutoTopicCreation = config.allowAutoTopicCreation ?? true
  // idempotence: a producer id per producer instance and a sequence per partition, as Kafka's producer id / sequence
  const producerId = randomUUID()
  const sequences = new Map<string, number>()
  let sendChain: Promise<unknown> = Promise.resolve()
  let status: Status = 'disconnected'
  let inFlight = 0
  let idle: (() => void) | undefined
  // after staging outbox messages (REPEATABLE READ / SERIALIZABLE caller) this producer listens, so the caller's
  // COMMIT notification makes this client number them (docs/decisions/outbox-010-staged-numbering.md)
  let listensForOutbox = false
  const staged = () => {
    if (listensForOutbox || !ctx.config.listen) return
    listensForOutbox = true
    ctx.wakeups.start().catch((e: unknown) => logger.warn('Could not listen for outbox commits', { error: (e as Error).message }))
  }

  const assertConnected = () => {
    if (status === 'disconnecting') {
      throw new KafkaJSNonRetriableError(`The producer is disconnecting; therefore, it can't safely accept messages anymore`)
    }
    if (status !== 'connected') throw new KafkaJSError('The producer is disconnected')
  }

  /** KafkaJS's own checks come before the connection check, as there. */
  const preflight = (batch: ProducerBatch) => kafkajsSendChecks(batch.topicMessages ?? [], { idempotent, acks: batch.acks ?? -1 })

  /** Validation first: nothing is written for a batch with one bad message. */
  const plan = async (batch: ProducerBatch): Promise<PartitionBatch[]> => {
    preflight(batch)
    const { compression, topicMessages = [] } = batch
    for (const { topic } of topicMessages) {
      // the broker's answer to an illegal name; the producer stays usable, as with Kafka
      const problem = typeof topic === 'string' ? topicNameProblem(topic) : 'Invalid topic name: not a string'
      if (problem) {
        logger.warn(problem, { topic: String(topic) })
        throw protocolError('INVALID_TOPIC_EXCEPTION')
      }
    }
    const normalized = normalizeProducerBatch(topicMessages, { maxMessageBytes: ctx.config.maxMessageBytes })
    const batches: TopicBatch[] = normalized.map((b, i) => ({
      topic: b.topic,
      messages: b.messages,
      originals: topicMessages[i].messages as Message[],
    }))
    const planned = await network.as('Metadata', () =>
      planSend(ctx, batches, {
        partitioner,
        compression: payloadCompressionFor(compression, ctx.config.payloadCompression),
        autoCreate: allowAutoTopicCreation ? (name: string) => newTopicFromDefaults(ctx, name) : undefined,
        metadataMaxAge,
      }),
    )
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

  /**
   * Writes with KafkaJS's retry policy; an idempotent producer's retry after an ambiguous failure is deduplicated.
   * The plan (topic ids, partitions, sequences) is kept across retries of the write, except after an unknown topic
   * or partition: nothing was written then, and the topic may have been deleted and re-created elsewhere, so the next
   * attempt plans again from fresh metadata (KafkaJS refreshes its metadata on that error too).
   */
  const send = async (batch: ProducerBatch, planned?: PartitionBatch[]): Promise<RecordMetadata[]> => {
    const write = () =>
      retrier(async (bail) => {
        try {
          planned ??= await plan(batch)
          const ready = planned
          return await network.as('Produce', () => writePlan(ctx, ready))
        } catch (e) {
          // the topic row the plan names was deleted meanwhile (its id is no longer there): Kafka's unknown topic
          const err = isDeletedTopic(e) ? protocolError('UNKNOWN_TOPIC_OR_PARTITION') : toKafkaJSError(e, 'send')
          if (!err.retriable) bail(err)
          if ((err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION') {
            ctx.topics.forget((batch.topicMessages ?? []).map((tm) => tm.topic))
            planned = undefined
          }
          throw err
        }
      })
    if (!idempotent) return write()
    // one batch at a time, so a partition's producer sequences are written in order
    const result = sendChain.then(write, write)
    sendChain = result.catch(() => undefined)
    return result
  }

  /**
   * acks: 0 resolves with [] once the batch is planned (metadata and validation errors still reject), as KafkaJS
   * resolves without waiting for the broker; the write goes on in the background and disconnect() waits for it.
   */
  const sendWithoutAck = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    let planned: PartitionBatch[]
    try {
      planned = await plan(batch)
    } catch (e) {
      throw toKafkaJSError(e, 'send')
    }
    inFlight++
    send(batch, planned)
      .catch((e: unknown) => logger.error(`Failed to send messages: ${(e as Error).message}`, { acks: 0 }))
      .finally(() => {
        if (--inFlight === 0) idle?.()
      })
    return []
  }

  // a `send` span per message, its context in the message's headers (no-op unless an OpenTelemetry SDK is registered)
  const sendChecked = (batch: ProducerBatch): Promise<RecordMetadata[]> =>
    traceSend(batch, (traced) => (traced.acks === 0 ? sendWithoutAck(traced) : send(traced)))

  /**
   * Inside someone else's transaction (outbox, producer transactions): no retry, the caller owns the outcome, and
   * offsets are assigned at commit so the open transaction does not stall other producers.
   */
  const sendWithin = async (client: Queryable, batch: ProducerBatch): Promise<RecordMetadata[]> => {
    try {
      return await traceSend(batch, async (traced) => {
        const planned = await plan(traced)
        return network.as('Produce', () => writeDeferred(ctx, planned, client, staged))
      })
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

  const transactions = new TransactionManager(
    ctx,
    config.transactionalId,
    config.transactionTimeout ?? DEFAULT_TRANSACTION_TIMEOUT_MS,
    logger,
    network,
    (client, batch) => tracked(() => sendWithin(client, batch)),
  )

  const producer: PgQueueProducer = {
    connect: async () => {
      if (status === 'connected') return
      status = 'connecting'
      try {
        await ctx.connectClient((probe) => network.as('ApiVersions', probe))
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
      if (listensForOutbox) {
        listensForOutbox = false
        await ctx.wakeups.stop()
      }
      await ctx.release()
      status = 'disconnected'
      emitter.emit(producerEvents.DISCONNECT)
    },
    isIdempotent: () => idempotent,
    events: producerEvents,
    on: (eventName, listener) => emitter.on(eventName, listener as never),
    send: async (record) => {
      const batch = recordAsBatch(record)
      preflight(batch)
      return tracked(() => sendChecked(batch))
    },
    sendBatch: async (batch) => {
      preflight(batch)
      return tracked(() => sendChecked(batch))
    },
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

// Poison messages on either transport: a failing eachMessage handler is retried in place with backoff (the
// partition waits, so order is kept), and after maxAttempts the message goes to a dead-letter topic with headers
// naming its origin and error, its offset committed, and the partition moves on. docs/retry-and-dead-letter.md.
import { randomUUID } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import type { EachMessageHandler, EachMessagePayload, Kafka as KafkaJSKafka, Producer } from 'kafkajs'
import { Kafka as PgQueueKafka } from '../kafka.js'
import { KafkaJSError } from '../kafkajs/errors.js'
import { memoryAttempts, storedAttempts, type AttemptKey, type AttemptLog } from './attempts.js'
import { deadLetterHeaders } from './headers.js'
import { resolveOptions, retryDelay, type DeadLetterOptions, type ResolvedOptions } from './options.js'

export { DLT_HEADERS, originOf, originalHeaders, type Origin } from './headers.js'
export type { BackoffOptions, DeadLetterOptions } from './options.js'

export const DEAD_LETTER_EVENTS = {
  /** a handler attempt failed and the message will be tried again after `delayMs` */
  RETRY: 'dead_letter.retry',
  /** the message was moved to the dead-letter topic */
  DEAD_LETTER: 'dead_letter.dead_lettered',
} as const

type EventName = (typeof DEAD_LETTER_EVENTS)[keyof typeof DEAD_LETTER_EVENTS]

export interface DeadLetterEventPayload {
  groupId: string
  topic: string
  partition: number
  offset: string
  /** attempts made so far */
  attempts: number
  error: Error
  /** RETRY: wait before the next attempt */
  delayMs?: number
  /** DEAD_LETTER: where the message went */
  deadLetterTopic?: string
}

/** KafkaJS's instrumentation event shape. */
export interface DeadLetterEvent {
  id: string
  type: EventName
  timestamp: number
  payload: DeadLetterEventPayload
}

export interface DeadLetterHandler {
  readonly events: typeof DEAD_LETTER_EVENTS
  /** connects the dead-letter producer (and, on pgQueue, the attempt store) */
  connect(): Promise<void>
  /**
   * Ends waits between attempts at once (that message is left uncommitted, for the next owner), lets handlers in
   * flight finish, then disconnects. Call it beside consumer.disconnect(), which waits for the handler.
   */
  disconnect(): Promise<void>
  /** wraps a handler: pass the result as `eachMessage` to consumer.run */
  eachMessage(handler: EachMessageHandler): EachMessageHandler
  on(event: EventName, listener: (event: DeadLetterEvent) => void): () => void
}

const HEARTBEAT_SLICE_MS = 500
const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)))

/**
 * Creates the dead-letter extension for one consumer group. `kafka` is this package's Kafka or KafkaJS's: on
 * pgQueue attempt counts are stored with the group and the move is one transaction; on Kafka counts live in this
 * process and the move is transactional only with `transactionalId`.
 */
export function deadLetter(kafka: KafkaJSKafka | PgQueueKafka, options: DeadLetterOptions): DeadLetterHandler {
  const o: ResolvedOptions = resolveOptions(options)
  const onPgQueue = kafka instanceof PgQueueKafka
  const transactionalId = o.transactionalId ?? (onPgQueue ? `${o.groupId}.dead-letter.${randomUUID()}` : undefined)
  const producer: Producer = transactionalId
    ? kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
    : kafka.producer()
  const emitter = new EventEmitter()
  let attemptLog: AttemptLog | undefined
  let eventId = 0
  let stopping = new AbortController()
  let inFlight = 0
  const idle = new EventEmitter()

  const emit = (type: EventName, payload: DeadLetterEventPayload) =>
    emitter.emit(type, { id: String(eventId++), type, timestamp: Date.now(), payload } satisfies DeadLetterEvent)

  /** The dead-letter send and the offset commit: one transaction when the producer has an id. */
  async function move(p: EachMessagePayload, attempts: number, error: Error): Promise<string> {
    const deadLetterTopic = o.topicFor(p.topic)
    const record = {
      topic: deadLetterTopic,
      messages: [{ key: p.message.key, value: p.message.value, headers: deadLetterHeaders(p, o.groupId, attempts, error) }],
    }
    if (!transactionalId) {
      await producer.send(record)
      return deadLetterTopic
    }
    const tx = await producer.transaction()
    try {
      await tx.send(record)
      const next = (BigInt(p.message.offset) + 1n).toString()
      await tx.sendOffsets({ consumerGroupId: o.groupId, topics: [{ topic: p.topic, partitions: [{ partition: p.partition, offset: next }] }] })
      await tx.commit()
    } catch (e) {
      if (tx.isActive()) await tx.abort().catch(() => undefined)
      throw e
    }
    return deadLetterTopic
  }

  /** Waits `ms`, heartbeating so the group does not take the partition away while the message waits. */
  async function wait(p: EachMessagePayload, ms: number): Promise<void> {
    const { signal } = stopping
    for (let left = ms; left > 0; left -= HEARTBEAT_SLICE_MS) {
      await delay(Math.min(left, HEARTBEAT_SLICE_MS), undefined, { signal }).catch(() => undefined)
      if (signal.aborted) throw new KafkaJSError('The dead-letter handler is disconnecting; the message is retried later', { retriable: true })
      await p.heartbeat()
    }
  }

  /**
   * Tries the handler until it succeeds or the attempts are used up. The stored count is read only after a first
   * failure, so a message that succeeds costs nothing extra; after a restart the count goes on from what was stored.
   */
  async function handle(handler: EachMessageHandler, p: EachMessagePayload, log: AttemptLog): Promise<void> {
    const key: AttemptKey = { group: o.groupId, topic: p.topic, partition: p.partition, offset: p.message.offset }
    let attempts: number | undefined
    let error: Error
    for (;;) {
      try {
        await handler(p)
        if (attempts !== undefined) await log.forget(key)
        return
      } catch (e) {
        error = asError(e)
        attempts = (attempts ?? (await log.read(key)).attempts) + 1
      }
      if (attempts >= o.maxAttempts) break
      await log.failed(key, attempts, `${error.name}: ${error.message}`)
      const delayMs = retryDelay(attempts, o.backoff, Math.random())
      emit(DEAD_LETTER_EVENTS.RETRY, { groupId: o.groupId, topic: p.topic, partition: p.partition, offset: p.message.offset, attempts, error, delayMs })
      await wait(p, delayMs)
    }
    const deadLetterTopic = await move(p, attempts, error)
    await log.forget(key)
    emit(DEAD_LETTER_EVENTS.DEAD_LETTER, { groupId: o.groupId, topic: p.topic, partition: p.partition, offset: p.message.offset, attempts, error, deadLetterTopic })
  }

  return {
    events: DEAD_LETTER_EVENTS,
    async connect() {
      await producer.connect()
      attemptLog ??= onPgQueue ? await storedAttempts(kafka) : memoryAttempts()
    },
    async disconnect() {
      stopping.abort()
      while (inFlight > 0) await once(idle, 'idle')
      stopping = new AbortController()
      await producer.disconnect()
      await attemptLog?.close()
      attemptLog = undefined
    },
    on(event, listener) {
      emitter.on(event, listener)
      return () => void emitter.off(event, listener)
    },
    eachMessage(handler) {
      return async (p) => {
        const log = attemptLog
        if (!log) throw new KafkaJSError('The dead-letter handler is not connected: call connect() first', { retriable: true })
        inFlight++
        try {
          await handle(handler, p, log)
        } finally {
          if (--inFlight === 0) idle.emit('idle')
        }
      }
    },
  }
}

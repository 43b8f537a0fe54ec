// Poison messages on either transport: a failing eachMessage or eachBatch handler is retried with backoff, in
// place (the partition waits, so order is kept) or through retry topics (the partition moves on), and after
// maxAttempts the message goes to a dead-letter topic with headers naming its origin and error, its offset
// committed, and the partition moves on. docs/retry-and-dead-letter.md.
import { randomUUID } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import type { EachBatchHandler, EachMessageHandler, IHeaders, Kafka as KafkaJSKafka, Producer, ProducerRecord } from 'kafkajs'
import { Kafka as PgQueueKafka } from '../kafka.js'
import { KafkaJSError } from '../kafkajs/errors.js'
import type { PgQueueTransaction } from '../producer/index.js'
import { memoryAttempts, storedAttempts, type AttemptLog } from './attempts.js'
import { handleBatch } from './batch.js'
import { retryStateOf } from './headers.js'
import { resolveOptions, type DeadLetterOptions, type ResolvedOptions } from './options.js'
import { idOf, inPlacePolicy, keyOf, retryTopicPolicy, type Delivery, type FailurePolicy, type PolicyRuntime } from './policy.js'

export { DLT_HEADERS, RETRY_HEADERS, originOf, originalHeaders, type Origin } from './headers.js'
export type { BackoffOptions, DeadLetterOptions, RetryMode } from './options.js'

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
  /** RETRY in retry-topics mode: where the next attempt waits */
  retryTopic?: string
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
  /**
   * wraps a batch handler: pass the result as `eachBatch` to consumer.run. The handler must resolveOffset each
   * message it finishes: when it throws, the first unresolved message is the one that failed.
   */
  eachBatch(handler: EachBatchHandler): EachBatchHandler
  /** retry-topics mode: the retry topics of `topic`, one per attempt after the first (create and subscribe them) */
  retryTopics(topic: string): string[]
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
  const producer: Producer = transactionalId ? kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 }) : kafka.producer()
  const emitter = new EventEmitter()
  let attemptLog: AttemptLog | undefined
  let eventId = 0
  let stopping = new AbortController()
  let inFlight = 0
  const idle = new EventEmitter()

  /** moves that threw here (the transaction's outcome not learned): looked up before the message is handled again */
  const unsettled = new Set<string>()
  /**
   * moves made after a gap in a batch, which committed nothing (Delivery.commitPast): when the message is fetched
   * again (eachBatchAutoResolve off) it is resolved, not handled or moved again
   */
  const movedAhead = new Set<string>()

  // a listener that throws must not fail the handler: the move is done, and a failure would deliver it again
  const emit = (type: EventName, payload: DeadLetterEventPayload) => {
    try {
      emitter.emit(type, { id: String(eventId++), type, timestamp: Date.now(), payload } satisfies DeadLetterEvent)
    } catch (e) {
      kafka.logger().error('A dead-letter event listener threw; ignored', { type, error: asError(e).message })
    }
  }
  const about = (d: Delivery, attempts: number, error: Error) => ({
    groupId: o.groupId,
    topic: d.topic,
    partition: d.partition,
    offset: d.message.offset,
    attempts,
    error,
  })

  /** one transaction at a time on the producer: partitions consumed concurrently move their messages in turn */
  let moving: Promise<unknown> = Promise.resolve()

  /**
   * The send on to `topic` and the offset commit: one transaction when the producer has an id. False when the
   * message had been moved already (pgQueue: the transaction found its mark and aborted).
   */
  async function forward(d: Delivery, topic: string, headers: IHeaders, attempts: number, error: Error): Promise<boolean> {
    const record = { topic, messages: [{ key: d.message.key, value: d.message.value, headers }] }
    if (!transactionalId) {
      await producer.send(record)
      if (d.commitPast === false) movedAhead.add(idOf(keyOf(o, d)))
      return true
    }
    const turn = moving.then(() => moveInTransaction(d, record, attempts, error))
    moving = turn.catch(() => undefined)
    return turn
  }

  /**
   * On pgQueue the transaction first marks the message moved (delivery_attempt.moved_at): a second move of it (this
   * process delivered it again after a move it saw fail, a stalled member moving late) finds the mark, or waits for
   * the first move's COMMIT and then finds it, and aborts. Generations fence the offset commit besides.
   */
  async function moveInTransaction(d: Delivery, record: ProducerRecord, attempts: number, error: Error): Promise<boolean> {
    const claim = attemptLog?.claim
    const key = keyOf(o, d)
    if (claim) unsettled.add(idOf(key))
    const tx = await producer.transaction()
    try {
      const marked = claim && (await (tx as PgQueueTransaction).within((db) => claim(db, key, attempts, `${error.name}: ${error.message}`)))
      if (claim && !marked) {
        await tx.abort()
        unsettled.delete(idOf(key))
        return false
      }
      await tx.send(record)
      const next = (BigInt(d.message.offset) + 1n).toString()
      const commitPast = d.commitPast !== false
      if (commitPast) {
        await tx.sendOffsets({ consumerGroupId: o.groupId, topics: [{ topic: d.topic, partitions: [{ partition: d.partition, offset: next }] }] })
      }
      await tx.commit()
      unsettled.delete(idOf(key))
      if (!commitPast) movedAhead.add(idOf(key))
      return true
    } catch (e) {
      if (tx.isActive()) await tx.abort().catch(() => undefined)
      throw e
    }
  }

  /**
   * A message moved here without a commit: `done`. One whose move threw here: `done` when the group turns out to be
   * done with it (moved, or committed past).
   */
  async function settle(d: Delivery): Promise<'handle' | 'done'> {
    const key = keyOf(o, d)
    if (movedAhead.delete(idOf(key))) return 'done'
    if (!unsettled.has(idOf(key)) || !attemptLog) return 'handle'
    const done = await attemptLog.done(key)
    unsettled.delete(idOf(key))
    return done ? 'done' : 'handle'
  }

  /** Waits `ms`, heartbeating so the group does not take the partition away while the message waits. */
  async function wait(d: Delivery, ms: number): Promise<void> {
    const { signal } = stopping
    for (let left = ms; left > 0; left -= HEARTBEAT_SLICE_MS) {
      await delay(Math.min(left, HEARTBEAT_SLICE_MS), undefined, { signal }).catch(() => undefined)
      if (signal.aborted) throw new KafkaJSError('The dead-letter handler is disconnecting; the message is retried later', { retriable: true })
      await d.heartbeat()
    }
  }

  const runtime: PolicyRuntime = {
    o,
    forward,
    settle,
    unsettled: (d) => unsettled.has(idOf(keyOf(o, d))) || movedAhead.has(idOf(keyOf(o, d))),
    wait,
    retried: (d, attempts, error, delayMs, retryTopic) =>
      emit(DEAD_LETTER_EVENTS.RETRY, { ...about(d, attempts, error), delayMs, ...(retryTopic ? { retryTopic } : {}) }),
    deadLettered: (d, attempts, error, deadLetterTopic) => emit(DEAD_LETTER_EVENTS.DEAD_LETTER, { ...about(d, attempts, error), deadLetterTopic }),
  }
  let policy: FailurePolicy | undefined

  /** Calls the handler until it gets through the message or the policy moves the message on. */
  async function handle(handler: EachMessageHandler, p: Parameters<EachMessageHandler>[0], policy: FailurePolicy): Promise<void> {
    if ((await policy.due(p)) === 'done') return
    let failed = false
    for (;;) {
      try {
        await handler(p)
        if (failed) await policy.succeeded(p)
        return
      } catch (e) {
        failed = true
        if ((await policy.failed(p, asError(e))) === 'moved') return
      }
    }
  }

  /** Counts a handler in flight, so disconnect() can wait for it. */
  async function tracked(run: (policy: FailurePolicy) => Promise<void>): Promise<void> {
    if (!policy) throw new KafkaJSError('The dead-letter handler is not connected: call connect() first', { retriable: true })
    inFlight++
    try {
      await run(policy)
    } finally {
      if (--inFlight === 0) idle.emit('idle')
    }
  }

  /** Messages due now from `from` on: in retry-topics mode those due no later than the first one waited for. */
  const dueCount = (messages: Delivery['message'][], from: number) => {
    if (o.mode === 'blocking') return messages.length - from
    const now = Date.now()
    let n = 1
    while (from + n < messages.length && (retryStateOf(messages[from + n]!.headers)?.notBefore ?? 0) <= now) n++
    return n
  }

  return {
    events: DEAD_LETTER_EVENTS,
    async connect() {
      await producer.connect()
      // on pgQueue both modes mark their moves in delivery_attempt
      attemptLog ??= onPgQueue ? await storedAttempts(kafka) : memoryAttempts()
      policy ??= o.mode === 'retry-topics' ? retryTopicPolicy(runtime) : inPlacePolicy(runtime, attemptLog)
    },
    async disconnect() {
      stopping.abort()
      while (inFlight > 0) await once(idle, 'idle')
      stopping = new AbortController()
      await producer.disconnect()
      await attemptLog?.close()
      attemptLog = undefined
      unsettled.clear()
      movedAhead.clear()
      policy = undefined
    },
    on(event, listener) {
      emitter.on(event, listener)
      return () => void emitter.off(event, listener)
    },
    eachMessage(handler) {
      return (p) => tracked((policy) => handle(handler, p, policy))
    },
    eachBatch(handler) {
      return (p) => tracked((policy) => handleBatch(handler, p, policy, dueCount))
    },
    retryTopics(topic) {
      return Array.from({ length: o.maxAttempts - 1 }, (_, i) => o.retryTopicFor(topic, i + 1))
    },
  }
}

// Instrumentation events with KafkaJS's names, payload envelope and listener semantics.
import { EventEmitter } from 'node:events'
import type { AdminEvents, ConsumerEvents, InstrumentationEvent, Logger, ProducerEvents, RemoveInstrumentationEventListener } from 'kafkajs'
import { KafkaJSError, KafkaJSNonRetriableError } from './errors.js'

// Same strings kafkajs builds from `${client}.${type}`; a unit test compares them with kafkajs's runtime objects.
export const consumerEvents: ConsumerEvents = Object.freeze({
  HEARTBEAT: 'consumer.heartbeat',
  COMMIT_OFFSETS: 'consumer.commit_offsets',
  GROUP_JOIN: 'consumer.group_join',
  FETCH: 'consumer.fetch',
  FETCH_START: 'consumer.fetch_start',
  START_BATCH_PROCESS: 'consumer.start_batch_process',
  END_BATCH_PROCESS: 'consumer.end_batch_process',
  CONNECT: 'consumer.connect',
  DISCONNECT: 'consumer.disconnect',
  STOP: 'consumer.stop',
  CRASH: 'consumer.crash',
  REBALANCING: 'consumer.rebalancing',
  RECEIVED_UNSUBSCRIBED_TOPICS: 'consumer.received_unsubscribed_topics',
  REQUEST: 'consumer.network.request',
  REQUEST_TIMEOUT: 'consumer.network.request_timeout',
  REQUEST_QUEUE_SIZE: 'consumer.network.request_queue_size',
})

export const producerEvents: ProducerEvents = Object.freeze({
  CONNECT: 'producer.connect',
  DISCONNECT: 'producer.disconnect',
  REQUEST: 'producer.network.request',
  REQUEST_TIMEOUT: 'producer.network.request_timeout',
  REQUEST_QUEUE_SIZE: 'producer.network.request_queue_size',
})

export const adminEvents: AdminEvents = Object.freeze({
  CONNECT: 'admin.connect',
  DISCONNECT: 'admin.disconnect',
  REQUEST: 'admin.network.request',
  REQUEST_TIMEOUT: 'admin.network.request_timeout',
  REQUEST_QUEUE_SIZE: 'admin.network.request_queue_size',
})

// kafkajs types `id` as string but emits a number; we emit a number too.
export type EmittedEvent<T = unknown> = Omit<InstrumentationEvent<T>, 'id'> & { id: number }
// any, as KafkaJS's own typings: a listener of one event's payload type must be accepted for every event
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EventListener = (event: InstrumentationEvent<any>) => unknown

export interface InstrumentationEmitter<E extends Record<string, string>> {
  readonly events: E
  /** Delivers `{id, type, timestamp, payload}` to the listeners of `type`; does nothing (no id used) without listeners. */
  emit(type: E[keyof E], payload?: unknown): void
  /** KafkaJS's `on`: validates the name, returns the remover. */
  on(eventName: string, listener: EventListener): RemoveInstrumentationEventListener<string>
  listenerCount(type: E[keyof E]): number
  removeAllListeners(): void
}

export interface EmitterOptions {
  /** Where listener failures are reported (kafkajs: `Failed to execute listener: <message>`). */
  logger?: Pick<Logger, 'error'>
  /** 'consumer' | 'producer' | 'admin'; used in the unknown-event message. Default: prefix of the first event type. */
  clientName?: string
}

// One counter for all emitters of the process, like kafkajs's module-level counter.
let lastId = -1
const nextId = (): number => {
  lastId = lastId >= Number.MAX_SAFE_INTEGER ? 0 : lastId + 1
  return lastId
}

export function createInstrumentationEmitter<E extends Record<string, string>>(
  eventTypes: E,
  options: EmitterOptions = {},
): InstrumentationEmitter<E> {
  const emitter = new EventEmitter()
  // Many listeners per event are legitimate (one per subscriber); no leak warning.
  emitter.setMaxListeners(0)
  const names = new Set<string>(Object.values(eventTypes))
  const clientName = options.clientName ?? String(Object.values(eventTypes)[0] ?? '').split('.')[0]
  const knownList = Object.keys(eventTypes)
    .map((key) => `${clientName}.events.${key}`)
    .join(', ')

  const reportFailure = (eventName: string, e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e))
    try {
      options.logger?.error(`Failed to execute listener: ${err.message}`, { eventName, stack: err.stack })
    } catch {
      // a broken logger must not turn into an unhandled rejection either
    }
  }

  return {
    events: eventTypes,
    emit(type, payload) {
      if (!type) throw new KafkaJSError('Invalid event name', { retriable: false })
      if (emitter.listenerCount(type) === 0) return
      const event: EmittedEvent = { id: nextId(), type, timestamp: Date.now(), payload }
      emitter.emit(type, event)
    },
    on(eventName, listener) {
      if (!names.has(eventName)) {
        throw new KafkaJSNonRetriableError(`Event name should be one of ${knownList}`)
      }
      // Called synchronously like kafkajs (so a listener sees the event before the emitting call returns),
      // but a sync throw or a rejected promise is only logged.
      const wrapped = (event: InstrumentationEvent<unknown>) => {
        try {
          Promise.resolve(listener(event)).catch((e: unknown) => reportFailure(eventName, e))
        } catch (e) {
          reportFailure(eventName, e)
        }
      }
      emitter.addListener(eventName, wrapped)
      return () => {
        emitter.removeListener(eventName, wrapped)
      }
    },
    listenerCount: (type) => emitter.listenerCount(type),
    removeAllListeners: () => {
      emitter.removeAllListeners()
    },
  }
}

// KafkaJS's *.network.request, request_timeout and request_queue_size events for the database round trips a client
// makes. Mapping (docs/compatibility.md, "Instrumentation"): one event per statement; apiName/apiKey name the Kafka
// request the operation stands for (a send is Produce, a poll Fetch, ...), apiVersion is 0; broker is the PostgreSQL
// endpoint host:port; size is the bytes sent (statement text plus bound values); duration is the statement's time,
// pendingDuration the wait for an in-flight slot (a wait for a pooled connection is inside duration);
// request_queue_size reports the operations waiting for an in-flight slot (maxInFlightRequests, as KafkaJS's request
// queue: on every change) and callers waiting for a pooled connection; request_timeout a statement ended by a timeout.
import { observeRoundTrips, type RoundTrip, type RoundTripObserver } from '../db/roundTrips.js'
import type { InstrumentationEmitter } from './instrumentation.js'
import { RequestQueue } from './requestQueue.js'

/** Kafka API keys of the requests our operations stand for. */
const API_KEYS = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  TxnOffsetCommit: 28,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  CreatePartitions: 37,
  DeleteGroups: 42,
} as const

export type ApiName = keyof typeof API_KEYS

interface NetworkEventNames {
  REQUEST: string
  REQUEST_TIMEOUT: string
  REQUEST_QUEUE_SIZE: string
}

export interface NetworkInstrumentation {
  /** Runs fn, emitting a network event for each statement it sends, as the Kafka request `apiName`. */
  as<T>(apiName: ApiName, fn: () => Promise<T>): Promise<T>
}

/** pg's read timeout, pool connect timeout, and PostgreSQL's statement_timeout / lock_timeout cancellations. */
function isTimeout(e: unknown): boolean {
  const { code, message } = (e ?? {}) as { code?: string; message?: string }
  return code === '57014' || code === '55P03' || /timeout/i.test(message ?? '')
}

function byteSize(v: unknown): number {
  if (v === null || v === undefined) return 0
  if (Buffer.isBuffer(v)) return v.length
  if (typeof v === 'string') return Buffer.byteLength(v)
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + byteSize(x), 0)
  return typeof v === 'bigint' || typeof v === 'number' ? 8 : Buffer.byteLength(String(v))
}

/**
 * `maxInFlightRequests`: the cap of the client's RequestQueue (requestQueue.ts); unset, nothing waits.
 */
export function createNetworkInstrumentation<E extends NetworkEventNames & Record<string, string>>(
  emitter: InstrumentationEmitter<E>,
  clientId: string,
  broker: () => string,
  maxInFlightRequests?: number | null,
): NetworkInstrumentation {
  const { events } = emitter
  let correlationId = 0
  const queue = new RequestQueue(maxInFlightRequests, (queueSize) =>
    emitter.emit(events.REQUEST_QUEUE_SIZE as E[keyof E], { broker: broker(), clientId, queueSize }),
  )
  const listened = () =>
    [events.REQUEST, events.REQUEST_TIMEOUT, events.REQUEST_QUEUE_SIZE].reduce((n, e) => n + emitter.listenerCount(e as E[keyof E]), 0) > 0

  const report = (apiName: ApiName, trip: RoundTrip, pendingDuration: number) => {
    const base = { broker: broker(), clientId, correlationId: correlationId++ }
    if (trip.waiting > 0) emitter.emit(events.REQUEST_QUEUE_SIZE as E[keyof E], { broker: base.broker, clientId, queueSize: trip.waiting })
    const timing = { createdAt: trip.startedAt - pendingDuration, sentAt: trip.startedAt, pendingDuration }
    const api = { apiName, apiKey: API_KEYS[apiName], apiVersion: 0 }
    if (trip.error !== undefined) {
      if (isTimeout(trip.error)) emitter.emit(events.REQUEST_TIMEOUT as E[keyof E], { ...base, ...timing, ...api })
      return
    }
    const size = Buffer.byteLength(trip.text) + byteSize(trip.values)
    emitter.emit(events.REQUEST as E[keyof E], { ...base, size, ...timing, duration: trip.durationMs, ...api })
  }

  return {
    as: async (apiName, fn) => {
      if (!queue.capped && !listened()) return fn()
      const slot = queue.capped ? queue.operation() : undefined
      const observer: RoundTripObserver = {
        before: slot?.before,
        after: listened() ? (trip) => report(apiName, trip, slot?.takePendingDuration() ?? 0) : undefined,
      }
      try {
        return await observeRoundTrips(observer, fn)
      } finally {
        slot?.end()
      }
    },
  }
}

import { KafkaJSConnectionError, KafkaJSError, KafkaJSNonRetriableError, KafkaJSRequestTimeoutError } from '../kafkajs/errors.js'

/** How a failure is surfaced: a lost/refused connection, a transient conflict worth retrying, or neither. */
export type PgErrorKind = 'connection' | 'transient' | 'fatal'

// The one table. SQLSTATE classes (two characters) and exact codes; exact codes win over classes.
const SQLSTATE_CLASSES: Record<string, PgErrorKind> = {
  '08': 'connection', // connection exception
}
const SQLSTATE_CODES: Record<string, PgErrorKind> = {
  '40001': 'transient', // serialization_failure
  '40P01': 'transient', // deadlock_detected
  '55P03': 'transient', // lock_not_available (NOWAIT / lock_timeout)
  '57014': 'transient', // query_canceled: statement_timeout under contention
  '57P01': 'connection', // admin_shutdown
  '57P02': 'connection', // crash_shutdown
  '57P03': 'connection', // cannot_connect_now (starting up / recovery)
  '53300': 'connection', // too_many_connections
  '25P03': 'connection', // idle_in_transaction_session_timeout: the server closed the session
}
// Node socket/DNS errors (err.code) that mean "could not reach or lost the server".
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// node-postgres / pg-pool report these without a code.
const MESSAGES = [
  'connection terminated unexpectedly',
  'connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'client has encountered a connection error and is not queryable',
  'connection terminated',
]

interface ErrorLike {
  code?: unknown
  message?: unknown
  errors?: unknown
  retriable?: unknown
}

/** Classifies any thrown value; AggregateErrors (dual-stack connect) count when any inner error does. */
export function classifyPgError(err: unknown): PgErrorKind {
  if (err === null || typeof err !== 'object') return 'fatal'
  const e = err as ErrorLike
  if (err instanceof KafkaJSError) {
    if (err instanceof KafkaJSConnectionError) return 'connection'
    return e.retriable ? 'transient' : 'fatal'
  }
  if (typeof e.code === 'string') {
    const code = e.code
    // node codes first: EPIPE also looks like a five-character SQLSTATE
    if (NODE_CODES.has(code)) return 'connection'
    if (/^[0-9A-Z]{5}$/.test(code)) {
      return SQLSTATE_CODES[code] ?? SQLSTATE_CLASSES[code.slice(0, 2)] ?? 'fatal'
    }
  }
  if (typeof e.message === 'string') {
    const msg = e.message.toLowerCase()
    if (MESSAGES.some((m) => msg.startsWith(m))) return 'connection'
  }
  if (Array.isArray(e.errors) && e.errors.some((inner) => classifyPgError(inner) === 'connection')) {
    return 'connection'
  }
  return 'fatal'
}

/** SQLSTATE of a server error, when there is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as ErrorLike | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !NODE_CODES.has(code) ? code : undefined
}

/** A foreign-key violation on a `*_topic_id_fkey`: the topic row a cached id named was deleted meanwhile. */
export function isDeletedTopic(err: unknown): boolean {
  return sqlState(err) === '23503' && /_topic_id_fkey$/.test((err as { constraint?: string }).constraint ?? '')
}

/**
 * `work`, once more when it failed on a topic deleted between its statement's snapshot and its foreign-key check:
 * the second statement's snapshot no longer sees the topic and leaves its partitions out. Only for work that is its
 * own transaction (a failed statement inside a caller's transaction has aborted it).
 */
export function againIfTopicDeleted<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((e: unknown) => {
    if (!isDeletedTopic(e)) throw e
    return work()
  })
}

/** lock_not_available: NOWAIT, lock_timeout, or a lock wait given up on a cycle (R__sequence_functions.sql) */
export function isLockNotAvailable(err: unknown): boolean {
  return sqlState(err) === '55P03'
}

/**
 * Wraps a pg/network error into KafkaJS's error classes so callers can rely on `retriable`
 * and `instanceof`. KafkaJS errors pass through unchanged. The original is kept as `cause`.
 */
export function toKafkaJSError(err: unknown, context?: string): InstanceType<typeof KafkaJSError> {
  if (err instanceof KafkaJSError) return err
  const base = err instanceof Error ? err.message : String(err)
  const state = sqlState(err)
  const message = `${context ? `${context}: ` : ''}${base}${state ? ` (SQLSTATE ${state})` : ''}`
  const kind = classifyPgError(err)
  // statement_timeout is the request timeout here (Kafka's requestTimeout maps onto it): KafkaJS's class for it
  const timedOut = state === '57014' && /statement timeout/i.test(base)
  const wrapped = timedOut
    ? new KafkaJSRequestTimeoutError(message)
    : kind === 'connection'
      ? new KafkaJSConnectionError(message, { code: (err as ErrorLike | null)?.code as string | undefined })
      : kind === 'transient'
        ? new KafkaJSError(message, { retriable: true })
        : new KafkaJSNonRetriableError(message)
  // kafkajs's typings leave `cause` out of the constructors (and KafkaJSConnectionError drops it): set it here.
  ;(wrapped as { cause?: unknown }).cause = err
  return wrapped
}

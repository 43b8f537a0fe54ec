import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'

/** Exponential backoff between attempts of one message: initialMs × factor^(n-1), capped, ± jitter. */
export interface BackoffOptions {
  /** wait before the 2nd attempt; default 1000 ms */
  initialMs?: number
  /** longest wait; default 30,000 ms */
  maxMs?: number
  /** growth per attempt; default 2 */
  factor?: number
  /** random spread as a fraction of the wait (0..1); default 0.2 */
  jitter?: number
}

/**
 * How a failing message waits for its next attempt. `blocking` (default): in place, the partition waits, order is
 * kept. `retry-topics`: the message goes to a retry topic per attempt (`<topic>.retry-<n>`) and the partition moves
 * on at once; order is not kept for the messages that failed (Spring Kafka's `@RetryableTopic`).
 */
export type RetryMode = 'blocking' | 'retry-topics'

export interface DeadLetterOptions {
  /** the consumer group whose handler is wrapped (its offset is committed with the move) */
  groupId: string
  /** dead-letter topic: a name, or one derived from the message's topic; default `<topic>.dlq` */
  topic?: string | ((topic: string) => string)
  /** attempts in all before a message is dead-lettered; default 5 (1 = no retry) */
  maxAttempts?: number
  backoff?: BackoffOptions
  /** default `blocking` */
  mode?: RetryMode
  /** retry-topics mode: the topic of attempt `attempt + 1` after `attempt` failures; default `<topic>.retry-<attempt>` */
  retryTopic?: (topic: string, attempt: number) => string
  /**
   * The dead-letter producer's transactional id. On pgQueue the move is always one transaction (an id is made up
   * when none is given); on Kafka a transaction is used only when one is given, else the move is at-least-once.
   */
  transactionalId?: string
}

export interface ResolvedOptions {
  groupId: string
  topicFor: (topic: string) => string
  maxAttempts: number
  backoff: Required<BackoffOptions>
  mode: RetryMode
  retryTopicFor: (topic: string, attempt: number) => string
  transactionalId?: string
}

const fail = (message: string): never => {
  throw new KafkaJSNonRetriableError(`Invalid dead-letter options: ${message}`)
}

function number(value: unknown, name: string, fallback: number, check: (n: number) => boolean, rule: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || !check(value)) fail(`${name} must be ${rule}, got ${String(value)}`)
  return value as number
}

export function resolveOptions(o: DeadLetterOptions): ResolvedOptions {
  if (!o || typeof o.groupId !== 'string' || o.groupId === '') fail('groupId must be a non-empty string')
  const topic = o.topic ?? ((t: string) => `${t}.dlq`)
  if (typeof topic === 'string' ? topic === '' : typeof topic !== 'function') fail('topic must be a non-empty string or a function')
  const b = o.backoff ?? {}
  const backoff = {
    initialMs: number(b.initialMs, 'backoff.initialMs', 1000, (n) => n >= 0, '>= 0'),
    maxMs: number(b.maxMs, 'backoff.maxMs', 30_000, (n) => n >= 0, '>= 0'),
    factor: number(b.factor, 'backoff.factor', 2, (n) => n >= 1, '>= 1'),
    jitter: number(b.jitter, 'backoff.jitter', 0.2, (n) => n >= 0 && n <= 1, 'between 0 and 1'),
  }
  if (backoff.maxMs < backoff.initialMs) fail('backoff.maxMs must not be below backoff.initialMs')
  const mode = o.mode ?? 'blocking'
  if (mode !== 'blocking' && mode !== 'retry-topics') fail(`mode must be "blocking" or "retry-topics", got ${String(mode)}`)
  if (o.retryTopic !== undefined && typeof o.retryTopic !== 'function') fail('retryTopic must be a function')
  if (o.transactionalId !== undefined && (typeof o.transactionalId !== 'string' || o.transactionalId === '')) {
    fail('transactionalId must be a non-empty string')
  }
  return {
    groupId: o.groupId,
    topicFor: typeof topic === 'string' ? () => topic : topic,
    maxAttempts: number(o.maxAttempts, 'maxAttempts', 5, (n) => Number.isInteger(n) && n >= 1, 'an integer >= 1'),
    backoff,
    mode,
    retryTopicFor: o.retryTopic ?? ((t, attempt) => `${t}.retry-${attempt}`),
    transactionalId: o.transactionalId,
  }
}

/** Wait before attempt `attempt + 1` after `attempt` failures; `random` in [0, 1). */
export function retryDelay(attempt: number, b: Required<BackoffOptions>, random: number): number {
  const base = Math.min(b.maxMs, b.initialMs * b.factor ** (attempt - 1))
  const spread = base * b.jitter * (2 * random - 1)
  return Math.max(0, Math.min(b.maxMs, Math.round(base + spread)))
}

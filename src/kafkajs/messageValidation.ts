// Producer input validation. First KafkaJS's own checks with its exact messages (apps match on them),
// then stricter checks of our own: Postgres rows are written in one transaction, so everything is
// rejected up front, with a KafkaJSNonRetriableError, before anything is written.
import type { Message } from 'kafkajs'
import { KafkaJSNonRetriableError } from './errors.js'

/** Kafka's broker default message.max.bytes. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588
/** DataHub's default message priority (0 = most urgent .. 9). */
export const DEFAULT_PRIORITY = 5
export const MAX_TOPIC_NAME_LENGTH = 249
export const MAX_GROUP_ID_LENGTH = 255

export type HeaderPair = [key: string, value: Buffer]

export interface NormalizedMessage {
  key: Buffer | null
  value: Buffer | null
  /** In producer order; array values become repeated pairs; null/undefined values are dropped. */
  headers: HeaderPair[]
  partition?: number
  priority: number
  /** ms since the epoch */
  timestamp?: number
  /** key + value + header key/value bytes, the figure checked against maxMessageBytes */
  sizeBytes: number
}

export interface ValidationOptions {
  /** Largest allowed key+value+headers size; default DEFAULT_MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number
}

/** A producer message plus the extension field we understand: priority 0 (first) .. 9, default 5. */
export type PgQueueMessage = Message & { priority?: number }

export interface TopicMessagesInput {
  topic?: unknown
  messages?: unknown
}

function fail(message: string): never {
  throw new KafkaJSNonRetriableError(message)
}

// Error messages must never themselves throw (null-prototype objects, BigInt, cycles).
function safeString(v: unknown): string {
  try {
    return `${v as string}`
  } catch {
    return Object.prototype.toString.call(v)
  }
}

function safeJson(v: unknown): string {
  try {
    const json = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))
    return json === undefined ? safeString(v) : json
  } catch {
    return safeString(v)
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Buffer.isBuffer(v)) return 'Buffer'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'object') {
    const name = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name
    return typeof name === 'string' && name !== 'Object' ? name : 'object'
  }
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`
  return `${typeof v} ${safeString(v)}`
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object') return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

const LEGAL_TOPIC = /^[a-zA-Z0-9._-]+$/

/** What breaks Kafka's topic rules (1..249 characters from [a-zA-Z0-9._-], not '.' or '..'), or null for a legal name. */
export function topicNameProblem(name: string): string | null {
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `Invalid topic name "${name.slice(0, 60)}...": longer than ${MAX_TOPIC_NAME_LENGTH} characters (${name.length})`
  }
  if (name === '.' || name === '..') return `Invalid topic name "${name}": "." and ".." are not allowed`
  if (!LEGAL_TOPIC.test(name)) return `Invalid topic name ${JSON.stringify(name)}: only ASCII letters, digits, ".", "_" and "-" are allowed`
  return null
}

/** Kafka's topic rules as a KafkaJSNonRetriableError. Falsy → KafkaJS's 'Invalid topic'. */
export function validateTopicName(name: unknown): asserts name is string {
  if (!name) fail('Invalid topic')
  if (typeof name !== 'string') return fail(`Invalid topic name: expected a string, got ${describe(name)}`)
  const problem = topicNameProblem(name)
  if (problem) fail(problem)
}

// No ASCII/C1 control characters: they break logs and are refused by Kafka tooling.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/

/**
 * A consumer group id, wherever one comes in (consumer, sendOffsets, admin, the ops API): KafkaJS's message for
 * falsy values, then what the offsets table can hold and tell apart: at most 255 characters, no control characters
 * (NUL included), well-formed Unicode (node-postgres would send an unpaired surrogate as U+FFFD, so "a\ud800b" and
 * "a\udfffb" would be one group), the rule transactional ids follow.
 */
export function validateGroupId(groupId: unknown): asserts groupId is string {
  if (!groupId || typeof groupId !== 'string') fail('Consumer groupId must be a non-empty string.')
  const id = groupId as string
  if (id.length > MAX_GROUP_ID_LENGTH) {
    fail(`Consumer groupId must be at most ${MAX_GROUP_ID_LENGTH} characters, got ${id.length}`)
  }
  if (CONTROL_CHARS.test(id)) fail(`Consumer groupId ${JSON.stringify(id)} must not contain control characters`)
  if (!id.isWellFormed()) fail(`Consumer groupId ${JSON.stringify(id)} must be well-formed Unicode (no unpaired surrogates)`)
}

/** clientId is optional (kafkajs defaults it to 'kafkajs'); when given it must be a printable string. */
export function validateClientId(clientId: unknown): asserts clientId is string | undefined {
  if (clientId === undefined) return
  if (typeof clientId !== 'string') return fail(`Invalid clientId: expected a string, got ${describe(clientId)}`)
  if (clientId.length > MAX_GROUP_ID_LENGTH) {
    fail(`Invalid clientId: must be at most ${MAX_GROUP_ID_LENGTH} characters, got ${clientId.length}`)
  }
  if (CONTROL_CHARS.test(clientId)) fail(`Invalid clientId ${JSON.stringify(clientId)}: must not contain control characters`)
}

/** A transactional id may be any non-empty string Kafka accepts, except what PostgreSQL text cannot hold. */
export function validateTransactionalId(id: unknown): asserts id is string | undefined {
  if (id === undefined) return
  if (typeof id !== 'string' || id.length === 0) return fail(`Invalid transactionalId: expected a non-empty string, got ${describe(id)}`)
  if (id.includes('\0') || !id.isWellFormed()) {
    fail(`Invalid transactionalId ${JSON.stringify(id)}: must be well-formed Unicode without NUL characters`)
  }
}

/**
 * The checks kafkajs's producer makes before it looks at the connection, in its order and with its messages. A
 * null message fails as it does there: reading `.value` of it throws a TypeError.
 */
export function kafkajsSendChecks(topicMessages: readonly unknown[], idempotence?: { idempotent: boolean; acks: number }): void {
  if (topicMessages.some((tm) => !(tm as TopicMessagesInput | null)?.topic)) fail('Invalid topic')
  if (idempotence?.idempotent && idempotence.acks !== -1) {
    fail(`Not requiring ack for all messages invalidates the idempotent producer's EoS guarantees`)
  }
  for (const tm of topicMessages as TopicMessagesInput[]) {
    const { topic, messages } = tm
    if (!messages || !Array.isArray(messages)) {
      fail(`Invalid messages array [${safeString(messages)}] for topic "${safeString(topic)}"`)
    }
    const list = messages as Array<{ value?: unknown }>
    const i = list.findIndex((m) => m.value === undefined)
    if (i !== -1) fail(`Invalid message without value for topic "${safeString(topic)}": ${safeJson(list[i])}`)
  }
}

function toBytes(v: string | Buffer): Buffer {
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v
}

function normalizeHeaders(headers: unknown, where: string): HeaderPair[] {
  if (headers === undefined || headers === null) return []
  if (!isPlainObject(headers)) {
    return fail(`Invalid headers ${where}: expected an object of string/Buffer values, got ${describe(headers)}`)
  }
  const pairs: HeaderPair[] = []
  for (const [name, raw] of Object.entries(headers)) {
    // header names are stored as JSON text: PostgreSQL refuses NUL and unpaired surrogates there
    if (name.includes('\0') || !name.isWellFormed()) {
      fail(`Invalid header name ${JSON.stringify(name)} ${where}: it must be well-formed Unicode without NUL characters`)
    }
    const values: unknown[] = Array.isArray(raw) ? raw : [raw]
    for (const v of values) {
      // kafkajs would send a null-valued header; the DataHub header JSON has no null, so we drop it.
      if (v === undefined || v === null) continue
      if (typeof v !== 'string' && !Buffer.isBuffer(v)) {
        fail(`Invalid header "${name}" ${where}: expected a string, Buffer or an array of them, got ${describe(v)}`)
      }
      pairs.push([name, toBytes(v as string | Buffer)])
    }
  }
  return pairs
}

function parseTimestamp(ts: unknown, where: string): number | undefined {
  if (ts === undefined || ts === null) return undefined
  let ms: number = Number.NaN
  if (typeof ts === 'number') ms = ts
  else if (typeof ts === 'string' && /^\d+$/.test(ts)) ms = Number(ts)
  if (!Number.isSafeInteger(ms) || ms < 0) {
    fail(`Invalid timestamp ${where}: expected milliseconds since the epoch as a non-negative integer (string or number), got ${describe(ts)}`)
  }
  return ms
}

/**
 * Validate one message (strict rules) and convert it to bytes. Extra fields are ignored: re-sending a
 * consumed KafkaMessage (offset, attributes, ...) is allowed, as with kafkajs.
 */
export function normalizeMessage(topic: string, message: unknown, options: ValidationOptions = {}, index?: number): NormalizedMessage {
  const where = `${index === undefined ? 'in message' : `in message ${index}`} for topic "${topic}"`
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return fail(`Invalid message ${where}: expected an object, got ${describe(message)}`)
  }
  const m = message as Record<string, unknown>

  const { key, value } = m
  if (value === undefined) fail(`Invalid message without value for topic "${topic}": ${safeJson(message)}`)
  if (value !== null && typeof value !== 'string' && !Buffer.isBuffer(value)) {
    fail(`Invalid value ${where}: expected a string, Buffer or null, got ${describe(value)}`)
  }
  if (key !== undefined && key !== null && typeof key !== 'string' && !Buffer.isBuffer(key)) {
    fail(`Invalid key ${where}: expected a string, Buffer, null or undefined, got ${describe(key)}`)
  }

  const partition = m.partition
  if (partition !== undefined && partition !== null && !(Number.isSafeInteger(partition) && (partition as number) >= 0)) {
    fail(`Invalid partition ${where}: expected a non-negative integer, got ${describe(partition)}`)
  }
  const priority = m.priority
  if (priority !== undefined && priority !== null && !(Number.isInteger(priority) && (priority as number) >= 0 && (priority as number) <= 9)) {
    fail(`Invalid priority ${where}: expected an integer from 0 to 9, got ${describe(priority)}`)
  }
  const timestamp = parseTimestamp(m.timestamp, where)
  const headers = normalizeHeaders(m.headers, where)

  const keyBytes = key === undefined || key === null ? null : toBytes(key as string | Buffer)
  const valueBytes = value === null ? null : toBytes(value as string | Buffer)
  let sizeBytes = (keyBytes?.length ?? 0) + (valueBytes?.length ?? 0)
  for (const [name, v] of headers) sizeBytes += Buffer.byteLength(name, 'utf8') + v.length
  const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  if (sizeBytes > max) {
    fail(`Message too large ${where}: ${sizeBytes} bytes (key + value + headers) exceeds the maximum of ${max} bytes`)
  }

  const normalized: NormalizedMessage = {
    key: keyBytes,
    value: valueBytes,
    headers,
    priority: (priority as number | null | undefined) ?? DEFAULT_PRIORITY,
    sizeBytes,
  }
  if (partition !== undefined && partition !== null) normalized.partition = partition as number
  if (timestamp !== undefined) normalized.timestamp = timestamp
  return normalized
}

/** Validate and normalise; nothing is returned unless every message of every topic is valid. */
export function normalizeProducerBatch(
  topicMessages: unknown,
  options: ValidationOptions = {},
): Array<{ topic: string; messages: NormalizedMessage[] }> {
  if (!Array.isArray(topicMessages)) fail(`Invalid topicMessages array [${safeString(topicMessages)}]`)
  const batch = topicMessages as unknown[]
  kafkajsSendChecks(batch)
  return (batch as TopicMessagesInput[]).map(({ topic, messages }) => {
    validateTopicName(topic)
    return { topic, messages: (messages as unknown[]).map((m, i) => normalizeMessage(topic, m, options, i)) }
  })
}

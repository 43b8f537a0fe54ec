import type { IHeaders, KafkaMessage } from 'kafkajs'

/**
 * Headers a dead-lettered message carries, named as Spring Kafka's dead-letter publisher names them so that tools
 * that read those (and people who know them) find the origin: topic, partition, offset, timestamp, attempts, and
 * the error's class, message and (truncated) stack.
 */
export const DLT_HEADERS = {
  topic: 'kafka_dlt-original-topic',
  partition: 'kafka_dlt-original-partition',
  offset: 'kafka_dlt-original-offset',
  timestamp: 'kafka_dlt-original-timestamp',
  group: 'kafka_dlt-original-consumer-group',
  attempts: 'kafka_dlt-attempts',
  errorClass: 'kafka_dlt-exception-fqcn',
  errorMessage: 'kafka_dlt-exception-message',
  errorStack: 'kafka_dlt-exception-stacktrace',
} as const

/** retry-topics mode: when a message in a retry topic is due (epoch ms), Spring's header name. */
export const RETRY_HEADERS = {
  notBefore: 'retry_topic-backoff-timestamp',
} as const

const STACK_LIMIT = 4096

export interface Origin {
  topic: string
  partition: number
  offset: string
  timestamp: string
  group: string
  attempts: number
  errorClass: string
  errorMessage: string
}

/**
 * The original message's headers plus where it came from and why it failed. A message that carries an origin
 * already (it comes from a retry topic) keeps it: the origin is always the topic the message was first sent to.
 */
export function deadLetterHeaders(
  source: { topic: string; partition: number; message: KafkaMessage },
  group: string,
  attempts: number,
  error: unknown,
): IHeaders {
  const e = error instanceof Error ? error : new Error(String(error))
  const h = source.message.headers ?? {}
  const carried = originOf(h) !== undefined
  const { [RETRY_HEADERS.notBefore]: _due, ...kept } = h
  return {
    ...kept,
    ...(carried
      ? {}
      : {
          [DLT_HEADERS.topic]: source.topic,
          [DLT_HEADERS.partition]: String(source.partition),
          [DLT_HEADERS.offset]: source.message.offset,
          [DLT_HEADERS.timestamp]: source.message.timestamp,
          [DLT_HEADERS.group]: group,
        }),
    [DLT_HEADERS.attempts]: String(attempts),
    [DLT_HEADERS.errorClass]: e.name,
    [DLT_HEADERS.errorMessage]: e.message,
    [DLT_HEADERS.errorStack]: (e.stack ?? '').slice(0, STACK_LIMIT),
  }
}

/** retry-topics mode: the headers of the next attempt's message, due at `notBefore`. */
export function retryHeaders(
  source: { topic: string; partition: number; message: KafkaMessage },
  group: string,
  attempts: number,
  error: unknown,
  notBefore: number,
): IHeaders {
  return { ...deadLetterHeaders(source, group, attempts, error), [RETRY_HEADERS.notBefore]: String(notBefore) }
}

/** retry-topics mode: failures so far and when the message is due, for a message from a retry topic. */
export function retryStateOf(headers: IHeaders | undefined): { attempts: number; notBefore: number } | undefined {
  const h = headers ?? {}
  if (h[RETRY_HEADERS.notBefore] === undefined || h[DLT_HEADERS.attempts] === undefined) return undefined
  return { attempts: Number(text(h[DLT_HEADERS.attempts])), notBefore: Number(text(h[RETRY_HEADERS.notBefore])) }
}

const text = (v: IHeaders[string]) => (Array.isArray(v) ? String(v[0] ?? '') : v === undefined ? '' : v.toString())

/** Where a dead-lettered message came from; undefined for a message without the headers. */
export function originOf(headers: IHeaders | undefined): Origin | undefined {
  const h = headers ?? {}
  if (h[DLT_HEADERS.topic] === undefined) return undefined
  return {
    topic: text(h[DLT_HEADERS.topic]),
    partition: Number(text(h[DLT_HEADERS.partition])),
    offset: text(h[DLT_HEADERS.offset]),
    timestamp: text(h[DLT_HEADERS.timestamp]),
    group: text(h[DLT_HEADERS.group]),
    attempts: Number(text(h[DLT_HEADERS.attempts])),
    errorClass: text(h[DLT_HEADERS.errorClass]),
    errorMessage: text(h[DLT_HEADERS.errorMessage]),
  }
}

/** The original headers: what a replay sends back to the original topic. */
export function originalHeaders(headers: IHeaders | undefined): IHeaders {
  const names = new Set<string>([...Object.values(DLT_HEADERS), ...Object.values(RETRY_HEADERS)])
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => !names.has(k)))
}

// Error helpers shared by the admin modules: KafkaJS's validation failures and the protocol errors a broker
// would answer with, so callers that check `type` / `code` see what they see on Kafka.
import { KafkaJSCreateTopicError, KafkaJSNonRetriableError, KafkaJSNotImplemented, KafkaJSProtocolError } from '../kafkajs/errors.js'
import { protocolErrorInfo, type ProtocolErrorType } from '../kafkajs/protocolErrors.js'

export const fail = (message: string): never => {
  throw new KafkaJSNonRetriableError(message)
}

// Not in protocolErrors.ts (yet): same type, code, retriability and message as KafkaJS's protocol/error.js.
const INVALID_CONFIG = { type: 'INVALID_CONFIG', code: 40, retriable: false, message: 'Configuration is invalid' }

type ErrorSpec = { type: string; code: number; retriable: boolean; message: string }

// the per-topic creation errors are all non-retriable in Kafka's error table
const spec = (type: ProtocolErrorType): ErrorSpec => ({ type, retriable: false, ...protocolErrorInfo(type) })

// KafkaJSProtocolError reads type, code, retriable and message off its argument.
const asProtocolError = (s: ErrorSpec) => new KafkaJSProtocolError(s as unknown as Error)

/** INVALID_CONFIG; the detail (which entry, why) is appended to KafkaJS's generic message. */
export function invalidConfig(detail: string): InstanceType<typeof KafkaJSProtocolError> {
  return asProtocolError({ ...INVALID_CONFIG, message: `${INVALID_CONFIG.message}: ${detail}` })
}

export type TopicErrorType = 'TOPIC_ALREADY_EXISTS' | 'INVALID_PARTITIONS' | 'INVALID_TOPIC_EXCEPTION'

/** One topic's failure inside createTopics' KafkaJSAggregateError. */
export function createTopicError(topic: string, type: TopicErrorType, detail?: string): InstanceType<typeof KafkaJSCreateTopicError> {
  const s = spec(type)
  if (detail) s.message = type === 'INVALID_TOPIC_EXCEPTION' ? detail : `${s.message}: ${detail}`
  return new KafkaJSCreateTopicError(s, topic)
}

const NotImplemented = KafkaJSNotImplemented as unknown as new (message: string) => InstanceType<typeof KafkaJSNotImplemented>

export function notSupported(method: string, why: string): Promise<never> {
  return Promise.reject(new NotImplemented(`admin.${method} is not supported on the PostgreSQL transport: ${why}`))
}

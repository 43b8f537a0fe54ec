import { KafkaJSProtocolError } from './errors.js'

/**
 * The Kafka protocol errors this backend raises, with the codes, retriability and messages KafkaJS gives them,
 * so code that checks `error.type` (e.g. UNKNOWN_TOPIC_OR_PARTITION) behaves the same on both transports.
 */
const PROTOCOL_ERRORS = {
  OFFSET_OUT_OF_RANGE: { code: 1, retriable: false, message: 'The requested offset is not within the range of offsets maintained by the server' },
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, retriable: true, message: 'This server does not host this topic-partition' },
  INVALID_TOPIC_EXCEPTION: { code: 17, retriable: false, message: 'The request attempted to perform an operation on an invalid topic' },
  INCONSISTENT_GROUP_PROTOCOL: {
    code: 23,
    retriable: false,
    message: "The group member's supported protocols are incompatible with those of existing members",
  },
  ILLEGAL_GENERATION: { code: 22, retriable: false, message: 'Specified group generation id is not valid' },
  UNKNOWN_MEMBER_ID: { code: 25, retriable: false, message: 'The coordinator is not aware of this member' },
  REBALANCE_IN_PROGRESS: { code: 27, retriable: false, message: 'The group is rebalancing, so a rejoin is needed' },
  TOPIC_ALREADY_EXISTS: { code: 36, retriable: false, message: 'Topic with this name already exists' },
  INVALID_PARTITIONS: { code: 37, retriable: false, message: 'Number of partitions is invalid' },
  INVALID_REPLICA_ASSIGNMENT: { code: 39, retriable: false, message: 'Replica assignment is invalid' },
  INVALID_PRODUCER_EPOCH: {
    code: 47,
    retriable: false,
    message:
      "Producer attempted an operation with an old epoch. Either there is a newer producer with the same transactionalId, or the producer's transaction has been expired by the broker",
  },
  INVALID_TXN_STATE: { code: 48, retriable: false, message: 'The producer attempted a transactional operation in an invalid state' },
  NON_EMPTY_GROUP: { code: 68, retriable: false, message: 'The group is not empty' },
  GROUP_ID_NOT_FOUND: { code: 69, retriable: false, message: 'The group id was not found' },
  INVALID_RECORD: { code: 87, retriable: false, message: 'This record has failed the validation on broker and hence be rejected' },
} as const

export type ProtocolErrorType = keyof typeof PROTOCOL_ERRORS

/** `detail`, when given, follows KafkaJS's message: what this backend knows about the case (e.g. which group). */
export function protocolError(type: ProtocolErrorType, detail?: string): InstanceType<typeof KafkaJSProtocolError> {
  const { code, retriable } = PROTOCOL_ERRORS[type]
  const message = detail ? `${PROTOCOL_ERRORS[type].message}: ${detail}` : PROTOCOL_ERRORS[type].message
  // KafkaJSProtocolError reads type, code, retriable and message off its argument
  return new KafkaJSProtocolError({ type, code, retriable, message } as unknown as Error)
}

export function protocolErrorInfo(type: ProtocolErrorType): { code: number; message: string } {
  return { code: PROTOCOL_ERRORS[type].code, message: PROTOCOL_ERRORS[type].message }
}

/** KafkaJS's isRebalancing: the member must rejoin the group (its consumer does, without crashing). */
export function isRebalancing(e: unknown): boolean {
  const type = (e as { type?: unknown } | null)?.type
  return type === 'REBALANCE_IN_PROGRESS' || type === 'NOT_COORDINATOR_FOR_GROUP' || type === 'ILLEGAL_GENERATION'
}

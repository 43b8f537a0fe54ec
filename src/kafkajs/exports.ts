// Everything `require('kafkajs')` exports except `Kafka` (the package entry adds its own), as the very
// same objects, so code mixing both packages shares enums, codecs and error classes. Enum-like values
// are exported as value + type so `level: logLevel` still type-checks against kafkajs's declarations.
import kafkajs from './upstream.js'
import type * as K from 'kafkajs'
import snappy from 'snappyjs'

// All of kafkajs's types (Producer, EachMessagePayload, ...). Local exports below take precedence.
export type * from 'kafkajs'

// Explicit (not `export *`) so these win over the type-only star export above.
export {
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSPartialMessageError,
  KafkaJSBrokerNotFound,
  KafkaJSProtocolError,
  KafkaJSConnectionError,
  KafkaJSConnectionClosedError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSOffsetOutOfRange,
  KafkaJSMemberIdRequired,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNotImplemented,
  KafkaJSMetadataNotLoaded,
  KafkaJSTopicMetadataNotLoaded,
  KafkaJSStaleTopicMetadataAssignment,
  KafkaJSDeleteGroupsError,
  KafkaJSTimeout,
  KafkaJSLockTimeout,
  KafkaJSServerDoesNotSupportApiKey,
  KafkaJSUnsupportedMagicByteInMessageSet,
  KafkaJSDeleteTopicRecordsError,
  KafkaJSInvariantViolation,
  KafkaJSInvalidVarIntError,
  KafkaJSInvalidLongError,
  KafkaJSCreateTopicError,
  KafkaJSAggregateError,
  KafkaJSFetcherRebalanceError,
  KafkaJSNoBrokerAvailableError,
  KafkaJSAlterPartitionReassignmentsError,
} from './errors.js'

export const logLevel = kafkajs.logLevel
export type logLevel = K.logLevel
export const CompressionTypes = kafkajs.CompressionTypes
export type CompressionTypes = K.CompressionTypes
export const CompressionCodecs = kafkajs.CompressionCodecs
export const Partitioners = kafkajs.Partitioners
export const PartitionAssigners = kafkajs.PartitionAssigners
export const AssignerProtocol = kafkajs.AssignerProtocol
export const ConfigResourceTypes = kafkajs.ConfigResourceTypes
export type ConfigResourceTypes = K.ConfigResourceTypes
export const ConfigSource = kafkajs.ConfigSource
export type ConfigSource = K.ConfigSource
export const AclResourceTypes = kafkajs.AclResourceTypes
export type AclResourceTypes = K.AclResourceTypes
export const AclOperationTypes = kafkajs.AclOperationTypes
export type AclOperationTypes = K.AclOperationTypes
export const AclPermissionTypes = kafkajs.AclPermissionTypes
export type AclPermissionTypes = K.AclPermissionTypes
export const ResourcePatternTypes = kafkajs.ResourcePatternTypes
export type ResourcePatternTypes = K.ResourcePatternTypes

/** The codec interface kafkajs calls: compress gets its Encoder (we only read `.buffer`). */
export interface KafkaJSCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>
  decompress(buffer: Buffer): Promise<Buffer>
}

// Java clients write Snappy in snappy-java's "xerial" framing: magic, two int32 versions, then
// [int32 length, raw block]*. Readers must accept it; raw blocks are what we (and DataHub) write.
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00])
const XERIAL_HEADER_BYTES = 16

function snappyUncompressMaybeFramed(input: Buffer): Buffer {
  if (input.length < XERIAL_HEADER_BYTES || !input.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) {
    return Buffer.from(snappy.uncompress(input))
  }
  const blocks: Buffer[] = []
  let offset = XERIAL_HEADER_BYTES
  while (offset < input.length) {
    if (offset + 4 > input.length) throw new Error('Truncated xerial snappy frame')
    const size = input.readInt32BE(offset)
    offset += 4
    if (size < 0 || offset + size > input.length) throw new Error('Truncated xerial snappy block')
    blocks.push(Buffer.from(snappy.uncompress(input.subarray(offset, offset + size))))
    offset += size
  }
  return Buffer.concat(blocks)
}

export const SnappyCodec: KafkaJSCodec = {
  async compress(encoder) {
    return Buffer.from(snappy.compress(encoder.buffer))
  },
  async decompress(buffer) {
    return snappyUncompressMaybeFramed(buffer)
  },
}

/** Replace kafkajs's "Snappy compression not implemented" codec (shared by both backends). Idempotent. */
export function registerSnappyCodec(): void {
  CompressionCodecs[CompressionTypes.Snappy] = () => SnappyCodec
}

// KafkaJS's error classes, re-exported so `instanceof` works for errors thrown by either backend.
// kafkajs is CommonJS and only some names are visible to ESM named imports: read them off the default export.
// Each class is exported as a value and as a type, so user code can write both `instanceof X` and `e: X`.
import kafkajs from './upstream.js'
import type * as K from 'kafkajs'

export const {
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSProtocolError,
  KafkaJSOffsetOutOfRange,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSConnectionError,
  KafkaJSRequestTimeoutError,
  KafkaJSMetadataNotLoaded,
  KafkaJSTopicMetadataNotLoaded,
  KafkaJSStaleTopicMetadataAssignment,
  KafkaJSServerDoesNotSupportApiKey,
  KafkaJSBrokerNotFound,
  KafkaJSPartialMessageError,
  KafkaJSSASLAuthenticationError,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNotImplemented,
  KafkaJSTimeout,
  KafkaJSLockTimeout,
  KafkaJSUnsupportedMagicByteInMessageSet,
  KafkaJSDeleteGroupsError,
  KafkaJSDeleteTopicRecordsError,
  KafkaJSAggregateError,
  KafkaJSAlterPartitionReassignmentsError,
} = kafkajs

export type KafkaJSError = K.KafkaJSError
export type KafkaJSNonRetriableError = K.KafkaJSNonRetriableError
export type KafkaJSProtocolError = K.KafkaJSProtocolError
export type KafkaJSOffsetOutOfRange = K.KafkaJSOffsetOutOfRange
export type KafkaJSNumberOfRetriesExceeded = K.KafkaJSNumberOfRetriesExceeded
export type KafkaJSConnectionError = K.KafkaJSConnectionError
export type KafkaJSRequestTimeoutError = K.KafkaJSRequestTimeoutError
export type KafkaJSMetadataNotLoaded = K.KafkaJSMetadataNotLoaded
export type KafkaJSTopicMetadataNotLoaded = K.KafkaJSTopicMetadataNotLoaded
export type KafkaJSStaleTopicMetadataAssignment = K.KafkaJSStaleTopicMetadataAssignment
export type KafkaJSServerDoesNotSupportApiKey = K.KafkaJSServerDoesNotSupportApiKey
export type KafkaJSBrokerNotFound = K.KafkaJSBrokerNotFound
export type KafkaJSPartialMessageError = K.KafkaJSPartialMessageError
export type KafkaJSSASLAuthenticationError = K.KafkaJSSASLAuthenticationError
export type KafkaJSGroupCoordinatorNotFound = K.KafkaJSGroupCoordinatorNotFound
export type KafkaJSNotImplemented = K.KafkaJSNotImplemented
export type KafkaJSTimeout = K.KafkaJSTimeout
export type KafkaJSLockTimeout = K.KafkaJSLockTimeout
export type KafkaJSUnsupportedMagicByteInMessageSet = K.KafkaJSUnsupportedMagicByteInMessageSet
export type KafkaJSDeleteGroupsError = K.KafkaJSDeleteGroupsError
export type KafkaJSDeleteTopicRecordsError = K.KafkaJSDeleteTopicRecordsError
export type KafkaJSAggregateError = K.KafkaJSAggregateError
export type KafkaJSAlterPartitionReassignmentsError = K.KafkaJSAlterPartitionReassignmentsError

// Classes kafkajs exports at runtime but leaves out of its .d.ts. The constructor signatures mirror
// kafkajs/src/errors.js so calls type-check the way they run.
const runtime = kafkajs as unknown as Record<string, unknown>

export type KafkaJSMemberIdRequired = K.KafkaJSProtocolError & { readonly memberId: string }
export const KafkaJSMemberIdRequired = runtime.KafkaJSMemberIdRequired as new (
  e: Error | string,
  metadata: { memberId: string },
) => KafkaJSMemberIdRequired

export type KafkaJSConnectionClosedError = K.KafkaJSConnectionError & {
  readonly host?: string
  readonly port?: number
}
export const KafkaJSConnectionClosedError = runtime.KafkaJSConnectionClosedError as new (
  e: Error | string,
  metadata?: { host?: string; port?: number },
) => KafkaJSConnectionClosedError

/** Message becomes `Invariant violated: <msg>. This is likely a bug and should be reported.` */
export type KafkaJSInvariantViolation = K.KafkaJSNonRetriableError
export const KafkaJSInvariantViolation = runtime.KafkaJSInvariantViolation as new (e: Error | string) => KafkaJSInvariantViolation

// kafkajs sets `name` of these two to 'KafkaJSNonRetriableError' (sic); kept as is.
export type KafkaJSInvalidVarIntError = K.KafkaJSNonRetriableError
export const KafkaJSInvalidVarIntError = runtime.KafkaJSInvalidVarIntError as new (e: Error | string) => KafkaJSInvalidVarIntError

export type KafkaJSInvalidLongError = K.KafkaJSNonRetriableError
export const KafkaJSInvalidLongError = runtime.KafkaJSInvalidLongError as new (e: Error | string) => KafkaJSInvalidLongError

/** Per-topic failure inside the KafkaJSAggregateError that admin.createTopics rejects with. */
export type KafkaJSCreateTopicError = K.KafkaJSProtocolError & { readonly topic: string }
export const KafkaJSCreateTopicError = runtime.KafkaJSCreateTopicError as new (
  e: Error | string | { message: string; type?: string; code?: number; retriable?: boolean },
  topicName: string,
) => KafkaJSCreateTopicError

/** A plain `Error` subclass in kafkajs (no `retriable`, `name` stays 'Error'). */
export type KafkaJSFetcherRebalanceError = Error
export const KafkaJSFetcherRebalanceError = runtime.KafkaJSFetcherRebalanceError as new (message?: string) => KafkaJSFetcherRebalanceError

/** Always has the message 'No broker available'. */
export type KafkaJSNoBrokerAvailableError = K.KafkaJSError
export const KafkaJSNoBrokerAvailableError = runtime.KafkaJSNoBrokerAvailableError as new () => KafkaJSNoBrokerAvailableError

// The public surface: KafkaJS's exports with `Kafka` backed by PostgreSQL, plus the transport toggle.
export * from './kafkajs/exports.js'
import { registerSnappyCodec } from './kafkajs/exports.js'
export { Kafka, type PgQueueKafkaConfig } from './kafka.js'
export { createKafka } from './transport.js'
export type { PgQueueProducer, PgQueueTransaction } from './producer/index.js'
export type {
  PgQueueConfig,
  PgQueueOptions,
  PriorityBand,
  Transport,
  ConnectionConfig,
  PoolConfig,
  TopicDefaults,
  ConsumerPollConfig,
  MaintenanceConfig,
  PartitioningConfig,
  EmbeddedConfig,
  PayloadCompression,
} from './config/types.js'
export type { Queryable } from './db/database.js'
export { createRoles, roleNames, type QueueRoles, type RoleOptions } from './store/roles.js'
export type { PgQueueMessage } from './kafkajs/messageValidation.js'
export {
  PgSchemaRegistry,
  createSchemaRegistryServer,
  startSchemaRegistry,
  createAvroCodec,
  encodeWireFormat,
  decodeWireFormat,
  SchemaRegistryError,
  REGISTRY_CONTENT_TYPE,
  COMPATIBILITY_LEVELS,
  type AvroCodec,
  type CompatibilityLevel,
  type RegistryBackend,
  type SchemaInput,
  type SchemaReference,
  type SchemaRegistryHandler,
  type SchemaRegistryServerOptions,
  type StartedSchemaRegistry,
  type StoredSchema,
  type SubjectVersion,
} from './registry/index.js'
export {
  DATAHUB_TOPICS,
  DATAHUB_AVRO_CONTENT_TYPE,
  DATAHUB_TOPIC_CONTENT_TYPE,
  seedDataHubTopics,
  dataHubCatalogue,
  encodeDataHubRow,
  decodeDataHubRow,
  dataHubPartition,
  dataHubLockKey,
  dataHubSubject,
  type DataHubSeedOptions,
  type DataHubRow,
  type DataHubRowInput,
  type DecodedDataHubRow,
  type SeededTopic,
  type DataHubTopicSettings,
  type DataHubHeaders,
} from './datahub/index.js'
export { runMaintenance, type MaintenanceReport } from './maintenance/run.js'
// poison messages: retry with backoff, then a dead-letter topic (docs/retry-and-dead-letter.md)
export {
  deadLetter,
  DEAD_LETTER_EVENTS,
  DLT_HEADERS,
  RETRY_HEADERS,
  originOf,
  originalHeaders,
  type DeadLetterHandler,
  type DeadLetterOptions,
  type BackoffOptions,
  type DeadLetterEvent,
  type DeadLetterEventPayload,
  type Origin,
  type RetryMode,
} from './deadLetter/index.js'
export { readDeadLetters, replayDeadLetters, type DeadLetterEntry, type DeadLetterRange, type ReadDeadLettersOptions } from './deadLetter/browse.js'
export { readFailingMessages, type FailingMessage } from './deadLetter/attempts.js'
// operations: health, lag, offset reset, registrations, metrics, the HTTP API (docs/operations.md)
export * from './ops/index.js'

// KafkaJS ships Snappy as "not implemented"; both transports get a working codec from importing this package.
registerSnappyCodec()

// The public surface: KafkaJS's exports with `Kafka` backed by PostgreSQL, plus the transport toggle.
export * from './kafkajs/exports.js'
import { registerSnappyCodec } from './kafkajs/exports.js'
export { Kafka, type PgQueueKafkaConfig } from './kafka.js'
export { createKafka } from './transport.js'
export type { PgQueueProducer } from './producer/index.js'
export type { PgQueueConfig, PgQueueOptions, PriorityBand, Transport } from './config/types.js'

// KafkaJS ships Snappy as "not implemented"; both transports get a working codec from importing this package.
registerSnappyCodec()

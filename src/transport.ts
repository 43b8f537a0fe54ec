import kafkajs from './kafkajs/upstream.js'
import type { Kafka as KafkaJSKafka, KafkaConfig } from 'kafkajs'
import { resolveTransport } from './config/resolve.js'
import { Kafka, type PgQueueKafkaConfig } from './kafka.js'

/**
 * The transport toggle: real KafkaJS when DATAHUB_MESSAGING_TRANSPORT is unset or `kafka`, PostgreSQL when it
 * is `pgqueue`; any other value throws, naming the variable. pgQueue settings are only read for `pgqueue`,
 * so a stray DATAHUB_PGQUEUE_* value cannot break a Kafka deployment. Both return KafkaJS's `Kafka` type.
 */
export function createKafka(config: PgQueueKafkaConfig, env: NodeJS.ProcessEnv = process.env): KafkaJSKafka {
  const transport = resolveTransport(undefined, env)
  if (transport === 'kafka') {
    const { pgqueue: _ignored, ...kafkaConfig } = config
    return new kafkajs.Kafka(kafkaConfig as KafkaConfig)
  }
  return new Kafka(config) as unknown as KafkaJSKafka
}

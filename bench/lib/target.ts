// The system under test: the same KafkaJS API over PostgreSQL (pgQueue) or a real broker, picked the way an
// application picks it, through createKafka and DATAHUB_MESSAGING_TRANSPORT.
import kafkajs from 'kafkajs'
import { createKafka } from '../../src/transport.js'
import type { PgQueueOptions } from '../../src/config/types.js'
import type { Backend } from './args.js'

export type Target = { backend: 'pgqueue'; url: string; schema: string; options?: PgQueueOptions } | { backend: 'kafka'; brokers: string[] }

export function backendOf(target: Target): Backend {
  return target.backend
}

export function makeKafka(target: Target, clientId: string): kafkajs.Kafka {
  const common = { clientId, logLevel: kafkajs.logLevel.NOTHING }
  if (target.backend === 'kafka') {
    return createKafka({ ...common, brokers: target.brokers }, { DATAHUB_MESSAGING_TRANSPORT: 'kafka' })
  }
  return createKafka(
    { ...common, pgqueue: { ...target.options, connectionString: target.url, schema: target.schema, enabled: true } },
    { DATAHUB_MESSAGING_TRANSPORT: 'pgqueue' },
  )
}

/** Creates a topic and waits until it can be used. */
export async function createTopic(target: Target, topic: string, numPartitions: number): Promise<void> {
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect()
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1 }], waitForLeaders: true })
  } finally {
    await admin.disconnect()
  }
}

/** The log-end offset of every partition (the offset the next message gets). */
export async function highWatermarks(target: Target, topic: string): Promise<Map<number, number>> {
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect()
  try {
    const offsets = await admin.fetchTopicOffsets(topic)
    return new Map(offsets.map((o) => [o.partition, Number(o.high)]))
  } finally {
    await admin.disconnect()
  }
}

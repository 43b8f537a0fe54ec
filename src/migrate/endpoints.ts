// The two ends of a migration, each seen through the KafkaJS API only (admin, producer, consumer), so one copy
// routine serves pgQueue -> Kafka and Kafka -> pgQueue alike.
import type { Admin, Consumer, ConsumerConfig, Producer, ProducerConfig } from 'kafkajs'
import { createRetrier } from '../kafkajs/retry.js'
import type { Backend } from './state.js'

export interface KafkaLike {
  admin(): Admin
  producer(config?: ProducerConfig): Producer
  consumer(config: ConsumerConfig): Consumer
}

export interface Endpoint {
  backend: Backend
  kafka: KafkaLike
  admin: Admin
}

/** Groups this tool makes to read with (and deletes afterwards): never migrated. */
export const READER_GROUP_PREFIX = 'kafkajs-pgqueue-migrate-'

export async function openEndpoint(backend: Backend, kafka: KafkaLike): Promise<Endpoint> {
  const admin = kafka.admin()
  await admin.connect()
  return { backend, kafka, admin }
}

// a topic just created on Kafka may answer NOT_LEADER for a while after createTopics returned (a loaded broker)
const retrier = createRetrier({ retries: 8, initialRetryTime: 200, maxRetryTime: 5000 })

/** Low and high watermark of every partition of a topic; retriable errors are retried. */
export async function watermarks(admin: Admin, topic: string): Promise<Map<number, { low: number; high: number }>> {
  const offsets = await retrier(async (bail) => {
    try {
      return await admin.fetchTopicOffsets(topic)
    } catch (err) {
      if (!(err as { retriable?: boolean }).retriable) bail(err)
      throw err
    }
  })
  return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]))
}

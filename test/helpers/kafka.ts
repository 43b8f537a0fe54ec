// Factories for the library under test: every client is disconnected after the file, topics and groups get
// unique names, so test files never collide.
import { randomBytes, randomInt } from 'node:crypto'
import { afterAll, beforeAll } from 'vitest'
import type { Consumer, ConsumerConfig, ProducerConfig } from 'kafkajs'
import { Kafka } from '../../src/kafka.js'
import type { PgQueueProducer } from '../../src/producer/index.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import type { PgQueueOptions } from '../../src/config/types.js'
import { quoteIdent } from '../../src/db/identifiers.js'
import { useTestSchema, type TestSchema } from './db.js'

export const uniqueName = (label: string) => `${label}-${randomBytes(4).toString('hex')}`

export interface TestKafka {
  db: TestSchema
  kafka: Kafka
  producer(config?: ProducerConfig): Promise<PgQueueProducer>
  consumer(config?: Partial<ConsumerConfig>): Promise<Consumer>
  /** another Kafka on the same schema, e.g. to stand for a second process */
  newKafka(options?: PgQueueOptions): Kafka
  /** a new topic with a unique name and this many partitions */
  createTopic(partitions: number, label?: string): Promise<string>
}

/**
 * DataHub's advisory-lock key is "<topicId>:<partition>" with no schema in it, and every schema numbers its topics
 * from 1: test files running side by side on one database would contend for (and form lock cycles over) each other's
 * partitions. Each file's topics get ids from a range of their own instead.
 */
async function spreadTopicIds(db: TestSchema, prefix: string): Promise<void> {
  const table = `${quoteIdent(db.schema)}.${quoteIdent(`${prefix}_topic`)}`
  const base = randomInt(1, 1_000_000) * 1_000_000
  await db.pool.query(`SELECT setval(pg_get_serial_sequence($1, 'id'), GREATEST($2::int8, (SELECT COALESCE(max(id), 0) FROM ${table})))`, [
    table,
    base,
  ])
}

export function useTestKafka(label: string, options: PgQueueOptions = {}): TestKafka {
  const db = useTestSchema(label)
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined)
  })
  const newKafka = (extra: PgQueueOptions = {}) =>
    new Kafka({ clientId: label, logLevel: logLevel.NOTHING, pgqueue: { ...db.options, ...options, ...extra } })
  const kafka = newKafka()
  // before any test makes a topic, however it makes it (this helper, admin.createTopics, a send that creates it)
  beforeAll(async () => {
    const admin = kafka.admin()
    await admin.connect() // migrates the file's schema
    await admin.disconnect()
    await spreadTopicIds(db, options.tablePrefix ?? 'metadata_queue')
  })
  return {
    db,
    kafka,
    newKafka,
    async producer(config) {
      const p = kafka.producer(config)
      await p.connect()
      cleanups.push(() => p.disconnect())
      return p
    },
    async createTopic(partitions, label = 'topic') {
      const topic = uniqueName(label)
      const admin = kafka.admin()
      await admin.connect()
      try {
        await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] })
      } finally {
        await admin.disconnect()
      }
      return topic
    },
    async consumer(config = {}) {
      const c = kafka.consumer({ groupId: uniqueName('group'), sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 1000, ...config })
      await c.connect()
      cleanups.push(() => c.disconnect())
      return c
    },
  }
}

// Shared set-up of the "sharing tables with DataHub" scenarios: a schema used by this library and by the DataHub
// protocol client at once, child-process writers of both families, and reading a group of ours to a count.
import type { Consumer, KafkaMessage } from 'kafkajs'
import { tablesFor } from '../../../src/db/tables.js'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { DataHubQueue } from '../../datahub-client/queue.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka, type TestKafka } from '../../helpers/kafka.js'
import { spawnFixture, type Child } from '../../helpers/processes.js'

export interface SharingFixture extends TestKafka {
  tables: ReturnType<typeof tablesFor>
  /** DataHub's client on this schema (its own pool) */
  dataHub(): DataHubQueue
  /** child-process writers, started together once all are ready; resolves when all are done */
  writeConcurrently(writers: Writer[], timeoutMs?: number): Promise<void>
  /** a DataHub consumer process polling `group` (prints `m <partition> <seq> <payload> <mime>`) */
  dataHubConsumer(topic: string, group: string, env?: Record<string, string>): Child
  /** consumes `topic` with a new consumer of ours until `count` messages arrived; returns them */
  consumeOurs(topic: string, count: number, opts?: ConsumeOptions): Promise<OurMessage[]>
  sql<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>
  topicId(topic: string): Promise<string>
}

export interface Writer {
  family: 'datahub' | 'ours'
  topic: string
  count: number
  batch: number
  id: string
}

export interface ConsumeOptions {
  groupId?: string
  fromBeginning?: boolean
  timeoutMs?: number
  /** resolve with what arrived by the timeout instead of failing (to report a scenario's counts) */
  allowFewer?: boolean
  /** collects the consumer's warn and error log messages */
  warnings?: string[]
}

export interface OurMessage {
  partition: number
  offset: string
  value: string
  key: string
}

export function useSharingFixture(label: string): SharingFixture {
  const t = useTestKafka(label)
  const tables = tablesFor(t.db.schema, 'metadata_queue')
  const env = () => ({ PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema })
  const sql = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.db.pool.query<R>(text, values)).rows
  let queue: DataHubQueue | undefined
  return {
    ...t,
    tables,
    sql,
    dataHub: () => (queue ??= new DataHubQueue(t.db.pool, t.db.schema)),
    async topicId(topic) {
      return (await sql<{ id: string }>(`SELECT id::text FROM ${tables.topic} WHERE topic_name = $1`, [topic]))[0].id
    },
    async writeConcurrently(writers, timeoutMs = 120_000) {
      const children = writers.map((w) =>
        w.family === 'datahub'
          ? spawnFixture('../datahub-client/worker.ts', {
              ...env(),
              ROLE: 'produce',
              TOPIC: w.topic,
              COUNT: String(w.count),
              BATCH: String(w.batch),
              ID: w.id,
            })
          : spawnFixture('countedProducer.ts', { ...env(), TOPIC: w.topic, COUNT: String(w.count), BATCH: String(w.batch), ID: w.id }),
      )
      await Promise.all(children.map((c) => c.waitForLine((l) => l === 'ready' || l.startsWith('fatal'))))
      for (const c of children) c.proc.kill('SIGUSR1')
      const ends = await Promise.all(children.map((c) => c.waitForLine((l) => l.startsWith('done') || l.startsWith('fatal'), timeoutMs)))
      const failed = ends.filter((l) => l.startsWith('fatal'))
      if (failed.length > 0) throw new Error(`writers failed: ${failed.join(' | ')}`)
      await Promise.all(children.map((c) => c.exited))
    },
    dataHubConsumer(topic, group, extra = {}) {
      return spawnFixture('../datahub-client/worker.ts', { ...env(), ROLE: 'consume', TOPIC: topic, GROUP: group, ...extra })
    },
    async consumeOurs(topic, count, opts = {}) {
      const warnings = opts.warnings
      const kafka = warnings
        ? new Kafka({
            clientId: label,
            logLevel: logLevel.WARN,
            logCreator:
              () =>
              ({ log }) =>
                void warnings.push(log.message),
            pgqueue: t.db.options,
          })
        : t.kafka
      const consumer: Consumer = kafka.consumer({ groupId: opts.groupId ?? uniqueName('ours'), maxWaitTimeInMs: 1000 })
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true })
      const got: OurMessage[] = []
      const done = deferred()
      if (count === 0) done.resolve()
      await consumer.run({
        eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
          got.push({ partition, offset: message.offset, value: message.value!.toString(), key: message.key?.toString() ?? '' })
          if (got.length === count) done.resolve()
        },
      })
      // bounded, so a consumer that stalls short of the count fails with the count it reached
      const timeout = setTimeout(
        () => (opts.allowFewer ? done.resolve() : done.reject(new Error(`our consumer got ${got.length} of ${count} from ${topic}`))),
        opts.timeoutMs ?? 60_000,
      )
      try {
        await done.promise
      } finally {
        clearTimeout(timeout)
        await consumer.disconnect()
      }
      return got
    },
  }
}

import type {
  Admin,
  AdminConfig,
  Consumer,
  ConsumerConfig,
  ConsumerGroupJoinEvent,
  ConsumerRunConfig,
  Kafka,
  Producer,
  ProducerConfig,
} from 'kafkajs'
import { it, type TestContext } from 'vitest'
import { makeKafka, pendingReason, type Capability } from './backend.js'
import { once, uniqueName, waitFor } from './helpers.js'

export * from './backend.js'

declare module 'vitest' {
  interface TaskMeta {
    /** Set on tests skipped for a backend; run.mjs prints it in the table. */
    pending?: string
  }
}

/** Consumer settings that keep group joins and shutdowns quick on a one-node broker. */
export const FAST_CONSUMER: Omit<ConsumerConfig, 'groupId'> = {
  sessionTimeout: 6000,
  heartbeatInterval: 500,
  rebalanceTimeout: 10_000,
  maxWaitTimeInMs: 200,
}

/** Per-test resources: a Kafka client, and every producer/consumer/admin it made, closed afterwards. */
export class Scope {
  private kafkaClient?: Kafka
  private consumers: Consumer[] = []
  private producers: Producer[] = []
  private admins: Admin[] = []
  private adminClient?: Admin

  async kafka(): Promise<Kafka> {
    this.kafkaClient ??= await makeKafka({ clientId: 'compat' })
    return this.kafkaClient
  }

  /** Closes a client the test made itself (e.g. never connected) with the others at the end. */
  track(client: Admin | Producer | Consumer): void {
    if ('seek' in client) this.consumers.push(client)
    else if ('send' in client) this.producers.push(client)
    else this.admins.push(client)
  }

  /** The scope's admin client (one per test, connected on first use). */
  async admin(): Promise<Admin> {
    if (!this.adminClient) {
      const admin = (await this.kafka()).admin()
      this.admins.push(admin)
      await admin.connect()
      this.adminClient = admin
    }
    return this.adminClient
  }

  /** An admin of its own, for tests that need non-default settings (e.g. fewer retries). */
  async separateAdmin(config: AdminConfig): Promise<Admin> {
    const admin = (await this.kafka()).admin(config)
    this.admins.push(admin)
    await admin.connect()
    return admin
  }

  async producer(config?: ProducerConfig): Promise<Producer> {
    const producer = (await this.kafka()).producer(config)
    this.producers.push(producer)
    await producer.connect()
    return producer
  }

  /** A connected consumer (FAST_CONSUMER defaults); a fresh group id unless one is given. */
  async consumer(config: Partial<ConsumerConfig> = {}): Promise<Consumer> {
    const consumer = (await this.kafka()).consumer({ ...FAST_CONSUMER, groupId: uniqueName('group'), ...config })
    this.consumers.push(consumer)
    await consumer.connect()
    return consumer
  }

  /** Creates a topic with a known partition count (real Kafka would auto-create it with 1). */
  async topic(numPartitions = 1, prefix = 'topic'): Promise<string> {
    const topic = uniqueName(prefix)
    await this.createTopics([{ topic, numPartitions }])
    return topic
  }

  /**
   * createTopics, then waits until every partition has a leader that serves it. KafkaJS's own
   * waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION, which a busy KRaft broker answers for a
   * moment after creation.
   */
  async createTopics(topics: { topic: string; numPartitions: number }[]): Promise<boolean> {
    const admin = await this.admin()
    const created = await admin.createTopics({ topics, waitForLeaders: false })
    await waitFor(
      async () => {
        try {
          const meta = await admin.fetchTopicMetadata({ topics: topics.map((x) => x.topic) })
          const led = meta.topics.every(
            (m) =>
              m.partitions.length === topics.find((x) => x.topic === m.name)!.numPartitions &&
              m.partitions.every((p) => p.partitionErrorCode === 0 && p.leader >= 0),
          )
          // ListOffsets is served by the partition leader: once it answers, produce will not bounce
          // with NOT_LEADER (a bounced send is retried whole and would duplicate messages)
          for (const { topic } of led ? topics : []) await admin.fetchTopicOffsets(topic)
          return led
        } catch {
          return false
        }
      },
      { interval: 50, message: `leaders for ${topics.map((x) => x.topic).join(', ')}` },
    )
    return created
  }

  /**
   * Runs the consumer and resolves once it joined its group and completed a first fetch, so that a
   * group starting "from latest" has fixed its position and messages produced now are delivered.
   */
  async runAndJoin(consumer: Consumer, run: ConsumerRunConfig): Promise<ConsumerGroupJoinEvent> {
    let join: ConsumerGroupJoinEvent | undefined
    const removeJoin = consumer.on(consumer.events.GROUP_JOIN, (e) => (join ??= e))
    const fetched = once((l) => consumer.on(consumer.events.FETCH, () => join && l(undefined)), {
      message: 'GROUP_JOIN then FETCH',
    })
    try {
      await consumer.run(run)
      await fetched
    } finally {
      removeJoin()
    }
    return join!
  }

  async close(): Promise<void> {
    const [consumers, others] = [this.consumers, [...this.producers, ...this.admins]]
    this.consumers = []
    this.producers = []
    this.admins = []
    this.adminClient = undefined
    // Consumers first so they leave their groups before anything else goes away.
    await Promise.all(consumers.map((c) => quietly(c.disconnect())))
    await Promise.all(others.map((c) => quietly(c.disconnect())))
  }
}

async function quietly(p: Promise<unknown>): Promise<void> {
  await p.catch(() => {})
}

export interface ContractOptions {
  /** Capabilities the test relies on; on a backend without one the test is skipped with the reason. */
  needs?: Capability[]
  timeout?: number
}

/**
 * A contract test: gets a Scope that is closed afterwards. Skips (with a printed reason) when the
 * backend is unavailable or lacks a needed capability — never silently.
 */
export function contract(name: string, body: (t: Scope, ctx: TestContext) => Promise<void>, options: ContractOptions = {}): void {
  it(name, { timeout: options.timeout }, async (ctx) => {
    const pending = pendingReason(options.needs ?? [])
    if (pending) {
      ctx.task.meta.pending = pending
      ctx.skip(pending)
    }
    const scope = new Scope()
    try {
      await body(scope, ctx)
    } finally {
      await scope.close()
    }
  })
}
